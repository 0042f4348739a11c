import StoryDaemon
import Synchronization
import Testing

/// Work beyond a gate's capacity is refused at once, not queued; a place
/// frees when work ends, also when it throws.
@Suite struct AdmissionGateTests {
    /// A latch the admitted work waits on until the test opens it.
    private actor Latch {
        private var waiting: [CheckedContinuation<Void, Never>] = []
        private var open = false
        private(set) var arrived = 0

        func wait() async {
            arrived += 1
            guard !open else { return }
            await withCheckedContinuation { waiting.append($0) }
        }

        func release() {
            open = true
            for continuation in waiting { continuation.resume() }
            waiting = []
        }
    }

    private struct Failed: Error {}

    @Test func workBeyondTheCapacityIsRefusedAndAPlaceFreesWhenWorkEnds() async throws {
        let gate = AdmissionGate(capacity: 2)
        let latch = Latch()
        let first = Task {
            await gate.ifAdmitted {
                await latch.wait()
                return 1
            }
        }
        let second = Task {
            await gate.ifAdmitted {
                await latch.wait()
                return 2
            }
        }
        for _ in 0..<500 where await latch.arrived < 2 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(await latch.arrived == 2)
        #expect(gate.count == 2)
        var ran = false
        let third = await gate.ifAdmitted {
            ran = true
            return 3
        }
        #expect(third == nil && !ran, "a third while two run is refused without running")
        await latch.release()
        #expect(await first.value == 1)
        #expect(await second.value == 2)
        #expect(gate.count == 0)
        #expect(await gate.ifAdmitted { 4 } == 4, "a place is free again")
        await #expect(throws: Failed.self) { try await gate.ifAdmitted { () throws -> Int in throw Failed() } }
        #expect(gate.count == 0, "work that throws gives its place back")
    }
}
