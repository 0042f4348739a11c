import StoryCore
import StoryTestSupport
import Testing

@testable import StorySync

/// The dialer's decisions without sockets: which address, when to wait,
/// when to end, and that no event arriving while a dialer is busy is lost.
@Suite struct DialerStateMachineTests {
    typealias Machine = DialerStateMachine<SeededGenerator>
    static let peer = PeerID(digest: (0..<32).map { UInt8($0) })!
    static let other = PeerID(digest: (0..<32).map { UInt8(255 - $0) })!

    static func machine() -> Machine {
        Machine(backoffBase: .seconds(1), backoffMaximum: .seconds(60), random: SeededGenerator(seed: 37))
    }

    /// A delay of the backoff's `attempt` (base·2^attempt, ±25 %).
    static func isBackoff(_ action: Machine.Action, attempt: Int, base: Double = 1, maximum: Double = 60) -> Bool {
        guard case .wait(let delay) = action else { return false }
        let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
        let raw = min(base * Double(1 << attempt), maximum)
        return seconds >= raw * 0.75 && seconds <= raw * 1.25
    }

    @Test func oneDialerPerPeerAndNoneOnceStopping() {
        var machine = Self.machine()
        do {
            let answer = machine.start(Self.peer)
            #expect(answer)
        }
        do {
            let answer = machine.start(Self.peer)
            #expect(!answer)
        }
        do {
            let answer = machine.start(Self.other)
            #expect(answer)
        }
        #expect(machine.dialing == [Self.peer, Self.other])
        machine.stop()
        do {
            let answer = machine.peerRead(Self.peer, configured: ["127.0.0.1:1"], isPaused: false, isConnected: false)
            #expect(answer == .stop)
        }
        #expect(machine.dialing == [Self.other])
        machine.ended(Self.other)
        do {
            let answer = machine.start(Self.other)
            #expect(!answer, "nothing starts while the daemon stops")
        }
    }

    @Test func eachAddressInTurnThenTheBackoffWhichGrows() {
        var machine = Self.machine()
        _ = machine.start(Self.peer)
        do {
            let answer = machine.peerRead(Self.peer, configured: ["a:1"], isPaused: false, isConnected: false)
            #expect(answer == .lookUpAddresses)
        }
        do {
            let answer = machine.found(Self.peer, addresses: ["a:1", "b:2"])
            #expect(answer == .connect("a:1"))
        }
        do {
            let answer = machine.connectFailed(Self.peer, isPaused: false)
            #expect(answer == .connect("b:2"))
        }
        let first = machine.connectFailed(Self.peer, isPaused: false)
        #expect(Self.isBackoff(first, attempt: 0), "\(first)")
        do {
            let answer = machine.waited(Self.peer)
            #expect(answer == .readPeer)
        }
        do {
            let answer = machine.peerRead(Self.peer, configured: ["a:1"], isPaused: false, isConnected: false)
            #expect(answer == .lookUpAddresses)
        }
        do {
            let answer = machine.found(Self.peer, addresses: ["a:1"])
            #expect(answer == .connect("a:1"))
        }
        let second = machine.connectFailed(Self.peer, isPaused: false)
        #expect(Self.isBackoff(second, attempt: 1), "\(second)")
        // Many failures later the delay stays at the maximum.
        var last = second
        for _ in 0..<12 {
            _ = machine.waited(Self.peer)
            _ = machine.peerRead(Self.peer, configured: ["a:1"], isPaused: false, isConnected: false)
            _ = machine.found(Self.peer, addresses: ["a:1"])
            last = machine.connectFailed(Self.peer, isPaused: false)
        }
        #expect(Self.isBackoff(last, attempt: 10), "capped at 60 s: \(last)")
    }

    @Test func aLongSessionResetsTheBackoffAShortOneDoesNot() {
        var machine = Self.machine()
        _ = machine.start(Self.peer)
        for attempt in 0..<3 {
            _ = machine.peerRead(Self.peer, configured: ["a:1"], isPaused: false, isConnected: false)
            _ = machine.found(Self.peer, addresses: ["a:1"])
            let action = machine.connectionEnded(Self.peer, outcome: .handled, lasted: .seconds(2), isPaused: false)
            #expect(Self.isBackoff(action, attempt: attempt), "attempt \(attempt): \(action)")
            _ = machine.waited(Self.peer)
        }
        _ = machine.peerRead(Self.peer, configured: ["a:1"], isPaused: false, isConnected: false)
        _ = machine.found(Self.peer, addresses: ["a:1"])
        let afterLong = machine.connectionEnded(Self.peer, outcome: .handled, lasted: .seconds(11), isPaused: false)
        #expect(Self.isBackoff(afterLong, attempt: 0), "\(afterLong)")
    }

    @Test func aRemovedPeerOrOneWithNowhereToDialEnds() {
        var machine = Self.machine()
        _ = machine.start(Self.peer)
        do {
            let answer = machine.peerRead(Self.peer, configured: nil, isPaused: false, isConnected: false)
            #expect(answer == .stop)
        }
        #expect(machine.dialing.isEmpty)
        _ = machine.start(Self.peer)
        _ = machine.peerRead(Self.peer, configured: [], isPaused: false, isConnected: false)
        do {
            let answer = machine.found(Self.peer, addresses: [])
            #expect(answer == .stop)
        }
        #expect(machine.dialing.isEmpty)
        // The next discovery of it starts a dialer again.
        do {
            let answer = machine.discovered(Self.peer, isConfigured: true)
            #expect(answer)
        }
        do {
            let answer = machine.discovered(Self.other, isConfigured: false)
            #expect(!answer, "a peer not configured is not dialed")
        }
    }

    @Test func aDiscoveryWhileAddressesAreLookedUpIsNotLost() {
        var machine = Self.machine()
        _ = machine.start(Self.peer)
        _ = machine.peerRead(Self.peer, configured: [], isPaused: false, isConnected: false)
        // Heard on the LAN while the lookup was under way: it has a dialer, so none starts...
        do {
            let answer = machine.discovered(Self.peer, isConfigured: true)
            #expect(!answer)
        }
        // ...and the lookup that found nothing looks again instead of ending.
        do {
            let answer = machine.found(Self.peer, addresses: [])
            #expect(answer == .readPeer)
        }
        _ = machine.peerRead(Self.peer, configured: [], isPaused: false, isConnected: false)
        do {
            let answer = machine.found(Self.peer, addresses: ["192.0.2.1:7460"])
            #expect(answer == .connect("192.0.2.1:7460"))
        }
    }

    @Test func newAddressesGivenWhileDialingAreTriedAtOnce() {
        var machine = Self.machine()
        _ = machine.start(Self.peer)
        _ = machine.peerRead(Self.peer, configured: ["a:1"], isPaused: false, isConnected: false)
        _ = machine.found(Self.peer, addresses: ["a:1"])
        machine.addressesChanged(Self.peer)
        do {
            let answer = machine.connectFailed(Self.peer, isPaused: false)
            #expect(answer == .readPeer, "no backoff: the new address is dialed now")
        }
        do {
            let answer = machine.peerRead(Self.peer, configured: ["b:2"], isPaused: false, isConnected: false)
            #expect(answer == .lookUpAddresses)
        }
        do {
            let answer = machine.found(Self.peer, addresses: ["b:2"])
            #expect(answer == .connect("b:2"))
        }
        // A change before the read is part of what was read: the next failure backs off.
        do {
            let answer = machine.connectFailed(Self.peer, isPaused: false)
            #expect(Self.isBackoff(answer, attempt: 0))
        }
    }

    @Test func pausedAndConnectedPeersWaitForTheirEventNotATimer() {
        var machine = Self.machine()
        _ = machine.start(Self.peer)
        do {
            let answer = machine.peerRead(Self.peer, configured: ["a:1"], isPaused: true, isConnected: false)
            #expect(answer == .waitForResume)
        }
        do {
            let answer = machine.resumed(Self.peer)
            #expect(answer == .readPeer)
        }
        do {
            let answer = machine.peerRead(Self.peer, configured: ["a:1"], isPaused: false, isConnected: true)
            #expect(answer == .waitUntilDisconnected)
        }
        do {
            let answer = machine.disconnected(Self.peer)
            #expect(answer == .readPeer)
        }
        // Paused while its session ran: read again (to wait for the resume), no backoff.
        _ = machine.peerRead(Self.peer, configured: ["a:1"], isPaused: false, isConnected: false)
        _ = machine.found(Self.peer, addresses: ["a:1"])
        do {
            let answer = machine.connectionEnded(Self.peer, outcome: .handled, lasted: .seconds(1), isPaused: true)
            #expect(answer == .readPeer)
        }
    }

    @Test func aDiscoveredAddressAnsweringAsSomeoneElseIsDiscreditedAConfiguredOneNever() {
        var machine = Self.machine()
        _ = machine.start(Self.peer)
        _ = machine.peerRead(Self.peer, configured: ["a:1"], isPaused: false, isConnected: false)
        do {
            let answer = machine.found(Self.peer, addresses: ["a:1", "liar:9", "b:2"])
            #expect(answer == .connect("a:1"))
        }
        // The configured address answered falsely: not discredited, the backoff follows.
        let afterConfigured = machine.connectionEnded(Self.peer, outcome: .notThePeer, lasted: .zero, isPaused: false)
        #expect(Self.isBackoff(afterConfigured, attempt: 0), "\(afterConfigured)")
        _ = machine.waited(Self.peer)
        _ = machine.peerRead(Self.peer, configured: ["a:1"], isPaused: false, isConnected: false)
        _ = machine.found(Self.peer, addresses: ["liar:9", "b:2"])
        do {
            let answer = machine.connectionEnded(Self.peer, outcome: .notThePeer, lasted: .zero, isPaused: false)
            #expect(answer == .discredit("liar:9"))
        }
        do {
            let answer = machine.discredited(Self.peer, isPaused: false)
            #expect(answer == .connect("b:2"), "the real peer may be the next one")
        }
    }

    @Test func aStoreFailureIsNotARemoval() {
        var machine = Self.machine()
        _ = machine.start(Self.peer)
        do {
            let answer = machine.peerReadFailed(Self.peer)
            #expect(Self.isBackoff(answer, attempt: 0))
        }
        do {
            let answer = machine.waited(Self.peer)
            #expect(answer == .readPeer)
        }
        #expect(machine.dialing == [Self.peer])
    }

    /// Random events in any order: the machine never asks to connect while
    /// stopping, never holds a dialer it told to stop, and every dialer ends
    /// once the daemon stops.
    @Test(arguments: 0..<50) func randomEventsKeepItsPromises(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var machine = Self.machine()
        var actions: [PeerID: Machine.Action] = [:]
        let peers = [Self.peer, Self.other]
        var stopping = false
        for step in 0..<200 {
            let peer = random.pick(peers)!
            if step == 150 {
                machine.stop()
                stopping = true
            }
            guard let action = actions[peer] else {
                if random.next() % 2 == 0 {
                    if machine.start(peer) {
                        #expect(!stopping)
                        actions[peer] = .readPeer
                    }
                } else if machine.discovered(peer, isConfigured: random.next() % 3 != 0) {
                    #expect(!stopping)
                    actions[peer] = .readPeer
                }
                continue
            }
            if random.next() % 5 == 0 { machine.addressesChanged(peer) }
            let paused = random.next() % 4 == 0
            let next: Machine.Action
            switch action {
            case .readPeer:
                next = machine.peerRead(
                    peer, configured: random.next() % 10 == 0 ? nil : ["a:1"], isPaused: paused, isConnected: random.next() % 4 == 0)
            case .waitForResume: next = machine.resumed(peer)
            case .waitUntilDisconnected: next = machine.disconnected(peer)
            case .lookUpAddresses: next = machine.found(peer, addresses: random.next() % 6 == 0 ? [] : ["a:1", "d:4"])
            case .connect:
                next =
                    random.next() % 2 == 0
                    ? machine.connectFailed(peer, isPaused: paused)
                    : machine.connectionEnded(
                        peer, outcome: random.next() % 2 == 0 ? .handled : .notThePeer, lasted: .seconds(Int64(random.next() % 20)),
                        isPaused: paused)
            case .discredit(let address):
                #expect(address == "d:4", "only the discovered address is discredited")
                next = machine.discredited(peer, isPaused: paused)
            case .wait: next = machine.waited(peer)
            case .stop: next = .stop
            }
            if stopping, case .connect = next { Issue.record("seed \(seed): connects while stopping") }
            if next == .stop {
                #expect(!machine.dialing.contains(peer), "seed \(seed): a stopped dialer is gone")
                actions[peer] = nil
            } else {
                #expect(machine.dialing.contains(peer))
                actions[peer] = next
            }
        }
        // Stopping: every remaining dialer ends within its next two steps.
        for (peer, action) in actions {
            let next: Machine.Action =
                switch action {
                case .readPeer: machine.peerRead(peer, configured: ["a:1"], isPaused: false, isConnected: false)
                case .waitForResume: machine.resumed(peer)
                case .waitUntilDisconnected: machine.disconnected(peer)
                case .lookUpAddresses: machine.found(peer, addresses: ["a:1"])
                case .connect: machine.connectFailed(peer, isPaused: false)
                case .discredit: machine.discredited(peer, isPaused: false)
                case .wait: machine.waited(peer)
                case .stop: .stop
                }
            #expect(next == .stop, "seed \(seed): \(action) → \(next) while stopping")
        }
        #expect(machine.dialing.isEmpty)
    }
}
