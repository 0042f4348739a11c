import ArgumentParser
import Foundation
import NIOPosix
import StoryCore
import StoryIdentity
import StoryStore
import StorySync

/// How soon a paused peer is dialed, and connected, again after `resume`:
/// the dialer waits on the peer manager's events, so this is the latency of
/// an event, a store read and a TLS connection on loopback, not of a timer.
/// The dialing side's backoff is 5 s, so no timer could explain a fast dial.
struct ResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume", abstract: "Latency from `resume` of a paused peer to its dial and its connection.")

    @Option(help: "Pause and resume this many times.") var trials = 20
    @Flag(help: "Print one JSON object.") var json = false

    func run() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let a = try await Node.start("a", group: group) {
            $0.backoffBase = .seconds(5)
            $0.backoffMaximum = .seconds(5)
        }
        let b = try await Node.start("b", group: group)
        defer {
            a.remove()
            b.remove()
        }
        let peer = b.identity.peerID
        try await b.store.addPeer(a.identity.peerID, name: "a", at: 1)  // accepts a, never dials it
        var events = a.manager.events().makeAsyncIterator()
        try await a.store.addPeer(peer, name: "b", address: "127.0.0.1:\(b.port)", at: 1)
        try await Self.next(.connected(peer), in: &events)
        var toDial: [Duration] = []
        var toConnect: [Duration] = []
        for _ in 0..<trials {
            try await a.manager.pause(peer)
            try await Self.next(.disconnected(peer), in: &events)
            try await Task.sleep(for: .milliseconds(50))
            let start = ContinuousClock.now
            try await a.manager.resume(peer)
            try await Self.next(.dialing(peer), in: &events)
            toDial.append(ContinuousClock.now - start)
            try await Self.next(.connected(peer), in: &events)
            toConnect.append(ContinuousClock.now - start)
        }
        await a.stop()
        await b.stop()
        func ms(_ duration: Duration) -> Double { Double(duration.components.attoseconds) / 1e15 + Double(duration.components.seconds) * 1000 }
        let dial = toDial.map(ms).sorted()
        let connect = toConnect.map(ms).sorted()
        let result: [String: Double] = [
            "trials": Double(trials), "dial_median_ms": dial[dial.count / 2], "dial_max_ms": dial.last ?? 0,
            "connect_median_ms": connect[connect.count / 2], "connect_max_ms": connect.last ?? 0,
        ]
        if json {
            let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(String(format: "resume → dial:      median %.3f ms, max %.3f ms (%d trials)", dial[dial.count / 2], dial.last ?? 0, trials))
            print(String(format: "resume → connected: median %.3f ms, max %.3f ms", connect[connect.count / 2], connect.last ?? 0))
        }
    }

    /// Waits (at most 10 s) for `event`, skipping others.
    private static func next(_ event: PeerEvent, in events: inout AsyncStream<PeerEvent>.Iterator) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            guard let next = await events.next() else { break }
            if next == event { return }
        }
        throw ValidationError("no \(event) within 10 s")
    }
}
