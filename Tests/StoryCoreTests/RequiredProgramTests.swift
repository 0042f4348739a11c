import StoryTestSupport
import Synchronization
import Testing

/// `.requires`: a test that needs a program says which and how to install it.
@Suite struct RequiredProgramTests {
    @Test func aMissingProgramIsNamedWithItsPackageAndAPresentOneIsNot() {
        #expect(RequiredProgram.isInstalled("sh") && RequiredProgram.isInstalled("/bin/sh"))
        #expect(!RequiredProgram.isInstalled("storyteller-no-such-program"))
        #expect(RequiredProgram.missing(["sh"]) == nil)
        let reason = RequiredProgram.missing(["sh", "storyteller-no-such-program"])
        #expect(
            reason == "needs storyteller-no-such-program, not installed here (Debian: apt install storyteller-no-such-program; .ci/run installs it)")
        // Two programs of one package: the package once.
        let poppler = RequiredProgram.missing(["/nonexistent/pdfinfo", "/nonexistent/pdftoppm"])
        #expect(poppler?.hasSuffix("(Debian: apt install poppler-utils; .ci/run installs it)") == true, "\(poppler ?? "")")
    }
}

/// `.daemons`: at most so many tests hold a slot; waiters get one only
/// when another is given back, in the order they came.
@Suite struct DaemonSlotsTests {
    final class Log: Sendable {
        let lines = Mutex<[String]>([])
    }

    @Test func waitersGetASlotOnlyWhenOneIsGivenBackInTheOrderTheyCame() async throws {
        let slots = DaemonSlots(count: 2)
        let log = Log()
        await slots.acquire()
        await slots.acquire()
        let first = Task {
            await slots.acquire()
            log.lines.withLock { $0.append("first") }
        }
        try await eventually("the first waiter waits") { slots.waitingCount == 1 }
        let second = Task {
            await slots.acquire()
            log.lines.withLock { $0.append("second") }
        }
        try await eventually("the second waiter waits behind it") { slots.waitingCount == 2 }
        #expect(log.lines.withLock { $0 }.isEmpty, "nobody got a third slot")
        slots.release()
        await first.value
        #expect(log.lines.withLock { $0 } == ["first"] && slots.waitingCount == 1)
        slots.release()
        await second.value
        #expect(log.lines.withLock { $0 } == ["first", "second"] && slots.waitingCount == 0)
    }
}
