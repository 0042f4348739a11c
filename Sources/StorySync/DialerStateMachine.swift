import StoryCore

/// When and where this daemon dials its configured peers, apart from the
/// sockets (`PeerManager` performs the actions): one dialer per peer at
/// most; a paused peer waits for its resume, a connected one for its
/// session to end; each attempt tries the configured addresses, then those
/// local discovery heard, and backs off exponentially after failures;
/// an address only discovery heard that answered as someone else is
/// discredited; a change of addresses or a discovery while a dialer was busy
/// is not lost (it dials again at once, or looks again, instead of waiting
/// out its backoff or ending).
///
/// Every event is taken and answered synchronously: the driver, an actor,
/// performs each action with no suspension between the machine's answer and
/// the first step of the action (subscribing to events, say), so what the
/// machine decided cannot be overtaken by an event it did not see.
/// What came of a connection this daemon dialed or accepted.
enum ConnectionOutcome: Equatable, Sendable {
    /// The TLS handshake failed, or another certificate answered than the one dialed.
    case notThePeer
    /// Anything else: a session ran, or the peer was refused or recorded as pending.
    case handled
}

struct DialerStateMachine<Random: RandomNumberGenerator> {
    /// What the driver does next for a peer's dialer.
    enum Action: Equatable {
        /// Read the peer's record (is it still configured, and where).
        case readPeer
        /// Paused: wait for `resume` (or the daemon stopping), then `resumed`.
        case waitForResume
        /// Connected already (it dialed in): wait for the session to end, then `disconnected`.
        case waitUntilDisconnected
        /// Look up where it may be (configured addresses, then discovered ones), then `found`.
        case lookUpAddresses
        /// Connect to this address, then `connected` or `connectFailed`.
        case connect(String)
        /// Record that this address answered as someone else, then `discredited`.
        case discredit(String)
        /// Wait this long, or less if it is discovered somewhere new, given
        /// other addresses, or the daemon stops; then `waited`.
        case wait(Duration)
        /// The dialer ends (the peer was removed, has nowhere to be dialed, or the daemon stops).
        case stop
    }

    private struct Dialer {
        var backoff: Backoff
        /// Where this attempt dials, in order, and how far it got.
        var candidates: [String] = []
        var next = 0
        /// The peer's configured addresses when it was read (a discovered
        /// address that answers falsely is discredited; a configured one never).
        var configured: [String] = []
        /// Discovery heard the peer while its addresses were looked up.
        var discoveredMeanwhile = false
        /// A user gave the peer other addresses since it was read.
        var addressesChanged = false
    }

    private var dialers: [PeerID: Dialer] = [:]
    private var isStopping = false
    private let backoffBase: Duration
    private let backoffMaximum: Duration
    private var random: Random
    /// A session that lasted this long resets the backoff.
    static var longSession: Duration { .seconds(10) }

    init(backoffBase: Duration, backoffMaximum: Duration, random: Random) {
        self.backoffBase = backoffBase
        self.backoffMaximum = backoffMaximum
        self.random = random
    }

    /// Peers with a dialer.
    var dialing: Set<PeerID> { Set(dialers.keys) }

    /// A dialer for `peer` is wanted (it is configured, or was heard on the
    /// LAN). True: start one, whose first action is `readPeer`. False: it
    /// has one already, or the daemon is stopping.
    mutating func start(_ peer: PeerID) -> Bool {
        guard !isStopping, dialers[peer] == nil else { return false }
        dialers[peer] = Dialer(backoff: Backoff(base: backoffBase, maximum: backoffMaximum))
        return true
    }

    /// The daemon stops: no dialer starts, and each ends at its next step.
    mutating func stop() { isStopping = true }

    /// The dialer's task ended (cancelled, say) without being told to `stop`.
    mutating func ended(_ peer: PeerID) { dialers[peer] = nil }

    /// Local discovery heard `peer` somewhere new. True: it had no dialer
    /// and now has one (start it).
    mutating func discovered(_ peer: PeerID, isConfigured: Bool) -> Bool {
        dialers[peer]?.discoveredMeanwhile = true
        return isConfigured && start(peer)
    }

    /// A user changed `peer`'s addresses.
    mutating func addressesChanged(_ peer: PeerID) { dialers[peer]?.addressesChanged = true }

    /// The peer's record was read: `configured` is its addresses, nil when
    /// it is no longer a configured peer.
    mutating func peerRead(_ peer: PeerID, configured: [String]?, isPaused: Bool, isConnected: Bool) -> Action {
        guard var dialer = dialers[peer] else { return .stop }
        guard !isStopping, let configured else { return finish(peer) }
        if isPaused {
            dialer.backoff.reset()
            dialers[peer] = dialer
            return .waitForResume
        }
        if isConnected {
            dialer.backoff.reset()
            dialers[peer] = dialer
            return .waitUntilDisconnected
        }
        dialer.configured = configured
        dialer.addressesChanged = false
        dialer.discoveredMeanwhile = false
        dialers[peer] = dialer
        return .lookUpAddresses
    }

    /// The peer's record could not be read: that is not a removal; try again after the backoff.
    mutating func peerReadFailed(_ peer: PeerID) -> Action {
        guard !isStopping, dialers[peer] != nil else { return finish(peer) }
        return .wait(dialers[peer]!.backoff.next(using: &random))
    }

    /// Resumed (or stopping): read the peer again.
    mutating func resumed(_ peer: PeerID) -> Action { again(peer) }

    /// Its session ended (or stopping): read the peer again.
    mutating func disconnected(_ peer: PeerID) -> Action { again(peer) }

    /// The backoff passed (or was cut short): read the peer again.
    mutating func waited(_ peer: PeerID) -> Action { again(peer) }

    /// Where the peer may be, in order. None: the dialer ends, unless it was
    /// discovered while they were looked up (then it looks again). Ending
    /// and the next discovery starting a dialer are one step each, so a
    /// discovery is never lost between them.
    mutating func found(_ peer: PeerID, addresses: [String]) -> Action {
        guard !isStopping, var dialer = dialers[peer] else { return finish(peer) }
        guard !addresses.isEmpty else {
            return dialer.discoveredMeanwhile ? again(peer) : finish(peer)
        }
        dialer.candidates = addresses
        dialer.next = 1
        dialers[peer] = dialer
        return .connect(addresses[0])
    }

    /// The address did not answer: the next one, or the backoff after the last.
    mutating func connectFailed(_ peer: PeerID, isPaused: Bool) -> Action { nextCandidate(peer, isPaused: isPaused) }

    /// A connection to the address ran and ended after `lasted`.
    mutating func connectionEnded(_ peer: PeerID, outcome: ConnectionOutcome, lasted: Duration, isPaused: Bool) -> Action {
        guard !isStopping, var dialer = dialers[peer] else { return finish(peer) }
        if lasted > Self.longSession { dialer.backoff.reset() }
        dialers[peer] = dialer
        let address = dialer.candidates[dialer.next - 1]
        // An address only discovery heard that answered as someone else (or
        // spoke no TLS): a false announcement. It is not dialed again, and the
        // next address is tried now: the real peer may be one of them.
        if outcome == .notThePeer, !dialer.configured.contains(address) { return .discredit(address) }
        return afterAttempt(peer, isPaused: isPaused)
    }

    /// The discredited address is recorded: the next one, or the backoff.
    mutating func discredited(_ peer: PeerID, isPaused: Bool) -> Action { nextCandidate(peer, isPaused: isPaused) }

    // MARK: -

    private mutating func nextCandidate(_ peer: PeerID, isPaused: Bool) -> Action {
        guard !isStopping, var dialer = dialers[peer] else { return finish(peer) }
        guard dialer.next < dialer.candidates.count else { return afterAttempt(peer, isPaused: isPaused) }
        let address = dialer.candidates[dialer.next]
        dialer.next += 1
        dialers[peer] = dialer
        return .connect(address)
    }

    /// An attempt is over: paused meanwhile, wait for the resume (read again);
    /// given other addresses meanwhile, try them now; else back off.
    private mutating func afterAttempt(_ peer: PeerID, isPaused: Bool) -> Action {
        guard var dialer = dialers[peer] else { return .stop }
        if isPaused || dialer.addressesChanged { return again(peer) }
        let delay = dialer.backoff.next(using: &random)
        dialer.candidates = []
        dialer.next = 0
        dialers[peer] = dialer
        return .wait(delay)
    }

    private mutating func again(_ peer: PeerID) -> Action {
        guard !isStopping, dialers[peer] != nil else { return finish(peer) }
        return .readPeer
    }

    private mutating func finish(_ peer: PeerID) -> Action {
        dialers[peer] = nil
        return .stop
    }
}
