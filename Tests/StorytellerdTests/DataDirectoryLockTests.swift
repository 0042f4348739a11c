import Foundation
import StoryTestSupport
import Testing

@testable import StoryDaemon

/// The data directory's lock when one process starts a daemon again: a child
/// spawned just as the first daemon stopped shares the lock's open file
/// description until its exec (a restart in CI failed with "another
/// storytellerd (pid of the tests themselves) is already using …"). A `dup`
/// of the lock's descriptor shares it the same way and stands for that child.
@Suite struct DataDirectoryLockTests {
    @Test func aStoppedDaemonsLockIsFreeEvenWhileAChildStillSharesIt() throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        var first: DataDirectoryLock? = try DataDirectoryLock.acquire(home.path)
        let child = dup(try #require(first).descriptor)
        try #require(child >= 0)
        defer { close(child) }
        first = nil
        let second = try DataDirectoryLock.acquire(home.path)
        #expect(try String(contentsOfFile: second.path, encoding: .utf8) == "\(getpid())\n")
    }

    /// Held by another description (another daemon): refused, naming its pid.
    @Test func aLockHeldElsewhereIsAnErrorNamingTheHolder() throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let running = try DataDirectoryLock.acquire(home.path)
        do {
            _ = try DataDirectoryLock.acquire(home.path)
            Issue.record("acquired a lock another description holds")
        } catch {
            #expect(error.description.contains("another storytellerd (pid \(getpid())) is already using \(home.path)"), "\(error)")
        }
        withExtendedLifetime(running) {}
    }
}
