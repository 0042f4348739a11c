import Foundation
import Testing

@testable import StoryDaemon

/// The data directory's lock when one process starts a daemon again: a child
/// spawned just as the first daemon stopped shares the lock until its exec
/// (a restart in CI failed with "another storytellerd (pid of the tests
/// themselves) is already using …"). Another open description of the lock
/// file, held and let go by the test, stands for that child.
@Suite struct DataDirectoryLockTests {
    /// Takes the lock in `home` and lets it go, then holds the lock file
    /// through a description of its own, as a forked child does (the file
    /// still names this process). Returns the file and that descriptor.
    private static func lockLeftToAChild(in home: TemporaryDirectory) async throws -> (path: String, child: Int32) {
        var first: DataDirectoryLock? = try await DataDirectoryLock.acquire(home.path)
        let path = try #require(first?.path)
        first = nil
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        try #require(descriptor >= 0)
        try #require(flock(descriptor, LOCK_EX | LOCK_NB) == 0)
        return (path, descriptor)
    }

    @Test func aLockStillHeldUnderThisProcesssPidIsWaitedForUntilLetGo() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let (path, child) = try await Self.lockLeftToAChild(in: home)
        let letGo = Task {
            try await Task.sleep(for: .milliseconds(100))
            close(child)
        }
        let second = try await DataDirectoryLock.acquire(home.path)
        try await letGo.value
        #expect(second.path == path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "\(getpid())\n")
    }

    @Test func aLockHeldLongerThanTheWaitIsAnErrorNamingTheHolder() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let (_, child) = try await Self.lockLeftToAChild(in: home)
        defer { close(child) }
        do {
            _ = try await DataDirectoryLock.acquire(home.path, ownWait: .milliseconds(50))
            Issue.record("acquired a lock another description holds")
        } catch {
            #expect(error.description.contains("another storytellerd (pid \(getpid())) is already using \(home.path)"), "\(error)")
        }
    }

    /// Held under another pid (another daemon): refused at once, not waited for.
    @Test func aLockHeldByAnotherProcessIsNotWaitedFor() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let (path, child) = try await Self.lockLeftToAChild(in: home)
        defer { close(child) }
        try Data("1\n".utf8).write(to: URL(fileURLWithPath: path))
        let started = ContinuousClock.now
        do {
            _ = try await DataDirectoryLock.acquire(home.path, ownWait: .seconds(30))
            Issue.record("acquired a lock another description holds")
        } catch {
            #expect(error.description.contains("another storytellerd (pid 1) is already using"), "\(error)")
        }
        #expect(ContinuousClock.now - started < .seconds(20), "it gave up without waiting for the 30 s")
    }
}
