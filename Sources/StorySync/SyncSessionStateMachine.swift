package import StoryCore

/// The protocol logic of one connection to a peer, with no I/O: events go in
/// (a message arrived, a document changed, time passed), actions come out
/// (send this, apply that, close). `PeerSession` carries the actions out.
///
/// Rules: both sides say Hello first (same protocol version, else Error and
/// close); then each advertises the documents it shares with the other (those
/// whose access list makes the other a member); on an Advertise, the receiver
/// sends what the advertiser lacks; changes of a document not shared with the
/// peer are refused with an Error and never applied (the store checks every
/// other change's author and rights); received changes are acknowledged after
/// they are stored; a peer silent for `idleTimeout` is dropped; pings keep it
/// alive.
package struct SyncSessionStateMachine: Sendable {
    package struct Configuration: Sendable {
        package var localName: String
        package var pingInterval: Duration
        package var idleTimeout: Duration
        /// Largest snapshot taken in parts (it is held whole to be merged).
        package var maximumSnapshotBytes: Int

        package init(
            localName: String, pingInterval: Duration = .seconds(15), idleTimeout: Duration = .seconds(45),
            maximumSnapshotBytes: Int = 1 << 30
        ) {
            self.localName = localName
            self.pingInterval = pingInterval
            self.idleTimeout = idleTimeout
            self.maximumSnapshotBytes = maximumSnapshotBytes
        }
    }

    /// A document synced with this peer, as the local side sees it.
    package struct SharedDocument: Hashable, Sendable {
        package var id: DocumentID
        package var kind: UInt8
        /// The peer's role in our copy of the access list: `.none` for a
        /// document taken from this peer whose founding change has not
        /// arrived yet (we receive from it, and have nothing to send).
        package var peerRole: Role

        package init(id: DocumentID, kind: UInt8, peerRole: Role) {
            self.id = id
            self.kind = kind
            self.peerRole = peerRole
        }
    }

    package enum Action: Hashable, Sendable {
        case send(Message)
        /// Advertise this document (the driver fills in name and version).
        case advertise(DocumentID)
        /// Send this peer what it lacks of a document (changes or a snapshot).
        case sync(DocumentID)
        /// Store and apply a change batch from the peer, then call `applied`.
        case apply(DocumentID, batch: ArraySlice<UInt8>)
        /// Merge the peer's snapshot, then call `applied`.
        case mergeSnapshot(DocumentID, kind: UInt8, bytes: ArraySlice<UInt8>)
        /// Keep a part of a snapshot arriving in parts (`isFirst`: a new one
        /// begins; `isLast`: it is whole, merge it, then call `applied`).
        /// `senderMayWrite`: the peer is an owner or editor in our access
        /// list; when not (a document taken from it, not founded yet), the
        /// snapshot's own header must say it is, as soon as it has arrived.
        case keepSnapshotPart(DocumentID, kind: UInt8, total: UInt64, bytes: ArraySlice<UInt8>, isFirst: Bool, isLast: Bool, senderMayWrite: Bool)
        /// Remember what the peer acknowledged (for compaction).
        case recordAcknowledged(DocumentID, VersionVector)
        /// The peer offers a document we do not have; call `addDocument` to take it.
        case offered(Message.Advertisement)
        /// A blob message for the daemon's blob exchange (`BlobExchange`).
        case blob(Message)
        /// Something worth a log line.
        case log(String)
        /// A round trip with the peer took this long (for metrics).
        case measured(RoundTrip, Duration)
        /// Close the connection (after the messages sent before).
        case close(SyncError?)
    }

    /// What a `measured` round trip is.
    package enum RoundTrip: Hashable, Sendable {
        /// A Ping until its Pong.
        case ping
        /// Changes (or a snapshot) sent until the peer acknowledged having stored them.
        case acknowledgement
    }

    /// Sends of a document kept per document until the peer acknowledges
    /// them; beyond this the oldest go unmeasured (a peer that never
    /// acknowledges must not grow the session's memory).
    static let maximumTimedSends = 64

    private enum State: Sendable {
        case idle, awaitingHello, established, closed
    }

    private struct DocumentState: Sendable {
        var shared: SharedDocument
        /// What the peer has: its Advertise, its Acks, the changes it sent us.
        var theirs = VersionVector()
        /// What we sent since the connection opened.
        var sent = VersionVector()
        /// Sends not yet acknowledged, oldest first: what each sent up to, and when.
        var timedSends: [(version: VersionVector, at: ContinuousClock.Instant)] = []
        var theyAdvertised = false
        /// We advertised it since the peer last did (so a second advertisement
        /// of the peer's is answered once, never bounced back and forth).
        var advertisedSinceTheirs = false
        /// The peer left it while away: it is told so (sent what it lacks up
        /// to its revocation) and nothing it sends of it is taken.
        var isLeaving = false
    }

    package let configuration: Configuration
    private var state = State.idle
    private var documents: [DocumentID: DocumentState] = [:]
    /// Advertisements of documents we did not have, kept until `addDocument`.
    private var offers: [DocumentID: Message.Advertisement] = [:]
    private var lastReceived: ContinuousClock.Instant?
    private var lastPing: ContinuousClock.Instant?
    private var pingNonce: UInt64 = 0
    /// When the ping with `pingNonce` was sent, until its pong comes.
    private var pingSentAt: ContinuousClock.Instant?
    /// The peer's name from its Hello.
    package private(set) var peerName: String?
    /// The reason of the peer's Goodbye, once it said one.
    package private(set) var goodbyeReason: String?
    /// The error the peer closed with, if it did (`unknownPeer`: it has not
    /// accepted this daemon yet).
    package private(set) var peerError: SyncError.Code?
    /// The two sides speak different protocol versions: which side to
    /// upgrade, in words (`Message.upgradeAdvice`), or what the peer said.
    package private(set) var versionMismatch: String?
    /// When the peer last sent something other than a ping or pong (its
    /// hello, changes, acknowledgements, blobs): how long the link is idle.
    package private(set) var lastActivity: ContinuousClock.Instant?
    /// Whether the peer's Hello said it takes snapshots in parts.
    package private(set) var peerTakesSnapshotParts = false
    /// The snapshot whose parts are arriving (one at a time per connection):
    /// what it is and how much of it arrived. The bytes are the driver's to
    /// keep (`keepSnapshotPart`), within bounds the machine does not know.
    private var assembling: (document: DocumentID, kind: UInt8, total: UInt64, received: UInt64)?

    package init(configuration: Configuration, documents: [SharedDocument]) {
        self.configuration = configuration
        for document in documents { self.documents[document.id] = DocumentState(shared: document) }
    }

    package var isEstablished: Bool { state == .established }
    package var isClosed: Bool { state == .closed }

    /// The documents this session syncs.
    package var documentIDs: [DocumentID] { documents.keys.sorted() }

    /// Documents synced with this peer that it advertised too (so it knows
    /// they are shared with us): what blobs are asked for and served over.
    package var mutuallyAdvertisedDocumentIDs: [DocumentID] {
        documents.filter { $0.value.theyAdvertised }.keys.sorted()
    }

    /// The connection is up (after TLS and the peer check): say Hello.
    package mutating func start(now: ContinuousClock.Instant) -> [Action] {
        // Closed before it started (shut down, or replaced while being set up).
        guard state == .idle else { return state == .closed ? [.close(nil)] : [] }
        state = .awaitingHello
        lastReceived = now
        lastPing = now
        return [.send(.hello(version: Message.protocolVersion, name: configuration.localName, capabilities: [Message.snapshotPartsCapability]))]
    }

    /// A message arrived from the peer.
    package mutating func receive(_ message: Message, now: ContinuousClock.Instant) -> [Action] {
        lastReceived = now
        switch message {
        case .ping, .pong: break
        default: lastActivity = now
        }
        switch (state, message) {
        case (.closed, _), (.idle, _):
            return []
        case (_, .goodbye(let reason)):
            state = .closed
            goodbyeReason = reason
            return [.log("peer said goodbye: \(reason)"), .close(nil)]
        case (_, .error(let code, let text)):
            let error = SyncError(SyncError.Code(rawValue: code), text)
            // A refused change or an unshared document is the peer's policy, not a broken connection.
            if error.code == .readOnly || error.code == .notShared { return [.log("peer refused: \(error)")] }
            state = .closed
            peerError = error.code
            if error.code == .protocolVersion, versionMismatch == nil {
                versionMismatch =
                    "the peer refused this Storyteller's sync protocol \(Message.protocolVersion) (\(PrintableText.escaped(text))): run the same Storyteller release on both machines"
            }
            return [.log("peer reported \(error)"), .close(error)]
        case (.awaitingHello, .hello(let version, let name, let capabilities)):
            guard version == Message.protocolVersion else {
                let advice = Message.upgradeAdvice(theirs: version)
                versionMismatch = advice.here
                state = .closed
                return [
                    .send(.error(code: SyncError.Code.protocolVersion.rawValue, message: advice.there)),
                    .close(SyncError(.protocolVersion, advice.here)),
                ]
            }
            state = .established
            peerName = name
            peerTakesSnapshotParts = capabilities.contains(Message.snapshotPartsCapability)
            for id in documents.keys { documents[id]!.advertisedSinceTheirs = true }
            return documents.keys.sorted().map(Action.advertise)
        case (.awaitingHello, _):
            return fail(SyncError(.malformed, "expected hello, got \(message.summary)"))
        case (.established, .hello):
            return fail(SyncError(.malformed, "a second hello"))
        case (.established, .advertise(let ad)):
            guard var document = documents[ad.document] else {
                offers[ad.document] = ad
                return [.offered(ad)]
            }
            guard document.shared.kind == ad.kind else {
                return fail(SyncError(.malformed, "\(ad.document) advertised with another kind"))
            }
            // Advertised a second time, with nothing from us since: the peer may
            // have begun the document anew in this session (shared with it again
            // after an unshare), and it syncs only once it hears our advertisement:
            // say it again, or both wait until a reconnect. (Answered once: our
            // answer is not answered in turn.)
            let again = document.theyAdvertised && !document.advertisedSinceTheirs && !document.isLeaving
            document.theirs.formUnion(ad.version)
            document.theyAdvertised = true
            document.advertisedSinceTheirs = again
            documents[ad.document] = document
            // An Advertise says what the peer has stored, as an Ack does: a
            // peer that already had everything (it caught up before a restart)
            // is then known to be in sync without sending anything.
            let acknowledged: [Action] = ad.version.isEmpty ? [] : [.recordAcknowledged(ad.document, ad.version)]
            return (again ? [.advertise(ad.document)] : []) + acknowledged + (document.shared.peerRole >= .reader ? [.sync(ad.document)] : [])
        case (.established, .changes(let id, let batch)):
            if let refusal = refusal(id) { return refusal }
            return [.apply(id, batch: batch)]
        case (.established, .snapshot(let id, let kind, let bytes)):
            if let refusal = refusal(id) { return refusal }
            guard documents[id]!.shared.kind == kind else {
                return fail(SyncError(.malformed, "snapshot of \(id) has another kind"))
            }
            if let refusal = snapshotRefusal(id) { return refusal }
            return [.mergeSnapshot(id, kind: kind, bytes: bytes)]
        case (.established, .snapshotPart(let id, let kind, let total, let offset, let bytes)):
            return receivePart(of: id, kind: kind, total: total, offset: offset, bytes: bytes)
        case (.established, .ack(let id, let version)):
            guard documents[id] != nil else { return [] }
            documents[id]!.theirs.formUnion(version)
            // Each send this acknowledgement covers has made its round trip.
            let covered = documents[id]!.timedSends.filter { $0.version.isCovered(by: version) }
            documents[id]!.timedSends.removeAll { $0.version.isCovered(by: version) }
            return [.recordAcknowledged(id, version)] + covered.map { .measured(.acknowledgement, now - $0.at) }
        case (.established, .blobHave), (.established, .blobRequest), (.established, .blobManifest),
            (.established, .blobChunk), (.established, .blobUnavailable):
            return [.blob(message)]
        case (.established, .ping(let nonce)):
            return [.send(.pong(nonce))]
        case (.established, .pong(let nonce)):
            guard nonce == pingNonce, let sentAt = pingSentAt else { return [] }
            pingSentAt = nil
            return [.measured(.ping, now - sentAt)]
        }
    }

    /// A part of a large snapshot: handed to the driver to keep until the
    /// last part, then merged as one. Parts come in order and one snapshot at
    /// a time. The sender's right is checked at the first part, before a
    /// byte is kept: a reader may not send one (it could not have written
    /// it), and a snapshot larger than `maximumSnapshotBytes` closes the
    /// connection.
    private mutating func receivePart(of id: DocumentID, kind: UInt8, total: UInt64, offset: UInt64, bytes: ArraySlice<UInt8>) -> [Action] {
        if let refusal = refusal(id) { return refusal }
        guard documents[id]!.shared.kind == kind else {
            return fail(SyncError(.malformed, "snapshot of \(id) has another kind"))
        }
        guard total <= UInt64(configuration.maximumSnapshotBytes) else {
            return fail(SyncError(.frameTooLarge, "a snapshot of \(total) bytes exceeds the limit of \(configuration.maximumSnapshotBytes)"))
        }
        if offset == 0 {
            guard assembling == nil else {
                return fail(SyncError(.malformed, "a snapshot of \(id) began before the one of \(assembling!.document) ended"))
            }
            if let refusal = snapshotRefusal(id) { return refusal }
            assembling = (id, kind, total, 0)
        }
        guard let current = assembling, current.document == id, current.total == total, current.received == offset, !bytes.isEmpty else {
            return fail(SyncError(.malformed, "snapshot part of \(id) at \(offset) of \(total) out of order"))
        }
        assembling!.received += UInt64(bytes.count)
        let isLast = assembling!.received == total
        if isLast { assembling = nil }
        let senderMayWrite = documents[id]!.shared.peerRole >= .editor
        return [
            .keepSnapshotPart(id, kind: kind, total: total, bytes: bytes, isFirst: offset == 0, isLast: isLast, senderMayWrite: senderMayWrite)
        ]
    }

    /// A reader may not send a snapshot: refused before anything of it is
    /// kept. (A document taken from the peer and not founded yet has no
    /// role for it here: its snapshot's header must make it an owner or
    /// editor, which the driver checks as soon as it has arrived.)
    private mutating func snapshotRefusal(_ id: DocumentID) -> [Action]? {
        guard documents[id]!.shared.peerRole == .reader else { return nil }
        return fail(SyncError(.forbidden, "a reader may not send a snapshot of \(id): it is not an owner or editor"))
    }

    private func refusal(_ id: DocumentID) -> [Action]? {
        guard let document = documents[id], !document.isLeaving else {
            return [
                .send(.error(code: SyncError.Code.notShared.rawValue, message: "\(id) is not shared with you")),
                .log("refused changes to \(id): not shared with this peer"),
            ]
        }
        return nil
    }

    private mutating func fail(_ error: SyncError) -> [Action] {
        state = .closed
        return [.send(.error(code: error.code.rawValue, message: error.message)), .close(error)]
    }

    /// The peer sent changes up to `version`: note it before they are stored,
    /// since storing them announces the change to every session, this one too,
    /// and they must not be sent back.
    package mutating func receiving(_ id: DocumentID, upTo version: VersionVector) {
        documents[id]?.theirs.formUnion(version)
    }

    /// The changes of a batch the peer sent were stored and applied (`received`:
    /// the highest seq per replica in it); `version`: ours now.
    package mutating func applied(_ id: DocumentID, received: VersionVector, version: VersionVector) -> [Action] {
        guard state == .established, documents[id] != nil else { return [] }
        documents[id]!.theirs.formUnion(received)
        return [.send(.ack(document: id, version: version))]
    }

    /// Applying what the peer sent failed: tell it and close (nothing was applied).
    package mutating func applyFailed(_ id: DocumentID, error: SyncError) -> [Action] {
        guard state != .closed else { return [] }
        return [.log("changes from the peer to \(id) failed: \(error)")] + fail(error)
    }

    /// What the peer has or will have of a document: send it changes not covered.
    package func knownVersion(of id: DocumentID) -> VersionVector? {
        guard let document = documents[id] else { return nil }
        return document.theirs.union(document.sent)
    }

    /// The peer's own advertised/acknowledged version (for the replica check).
    package func peerVersion(of id: DocumentID) -> VersionVector? { documents[id]?.theirs }

    /// We sent changes (or a snapshot) up to `version` at `now`; the
    /// acknowledgement that covers it is measured from then.
    package mutating func sent(_ id: DocumentID, upTo version: VersionVector, at now: ContinuousClock.Instant) {
        guard documents[id] != nil else { return }
        documents[id]!.sent.formUnion(version)
        documents[id]!.timedSends.append((version, now))
        if documents[id]!.timedSends.count > Self.maximumTimedSends { documents[id]!.timedSends.removeFirst() }
    }

    /// A document changed here (a local edit, or changes from another peer):
    /// push it live if this peer takes changes to it.
    package func documentChanged(_ id: DocumentID) -> [Action] {
        guard state == .established, let document = documents[id], document.theyAdvertised, document.shared.peerRole >= .reader
        else {
            return []
        }
        return [.sync(id)]
    }

    /// A document became shared with this peer (or we took an offered one).
    package mutating func addDocument(_ shared: SharedDocument) -> [Action] {
        guard state != .closed else { return [] }
        // Already synced with this role: nothing to say again (an access
        // change elsewhere in the library must not re-advertise everything).
        if documents[shared.id]?.shared == shared && offers[shared.id] == nil { return [] }
        var document = documents[shared.id] ?? DocumentState(shared: shared)
        document.shared = shared
        var actions: [Action] = []
        if let offer = offers.removeValue(forKey: shared.id) {
            document.theirs.formUnion(offer.version)
            document.theyAdvertised = true
            // What the offer said the peer has is what it has stored, as for
            // any advertisement: without it, a peer that sent a whole project
            // and nothing after stayed "never synced", with every change "to send".
            if !offer.version.isEmpty { actions.append(.recordAcknowledged(shared.id, offer.version)) }
        }
        if document.theyAdvertised && shared.peerRole >= .reader { actions.append(.sync(shared.id)) }
        documents[shared.id] = document
        guard state == .established else { return [] }
        documents[shared.id]!.advertisedSinceTheirs = true
        return [.advertise(shared.id)] + actions
    }

    /// The peer advertised a document it lost its rights to while away: keep
    /// what it has (to send it what it lacks up to the revocation) without
    /// syncing the document with it.
    package mutating func bidFarewell(_ id: DocumentID, kind: UInt8, theirs: VersionVector) {
        var document = DocumentState(shared: SharedDocument(id: id, kind: kind, peerRole: .none))
        document.theirs = theirs
        document.isLeaving = true
        documents[id] = document
        offers[id] = nil
    }

    /// A document is no longer shared with this peer.
    package mutating func removeDocument(_ id: DocumentID) {
        documents[id] = nil
    }

    /// Time passed: ping a quiet peer, drop a silent one.
    package mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        guard state == .awaitingHello || state == .established, let lastReceived else { return [] }
        if now - lastReceived >= configuration.idleTimeout {
            return fail(SyncError(.timeout, "nothing received for \(configuration.idleTimeout)"))
        }
        if state == .established, now - max(lastReceived, lastPing ?? lastReceived) >= configuration.pingInterval {
            lastPing = now
            pingNonce += 1
            pingSentAt = now
            return [.send(.ping(pingNonce))]
        }
        return []
    }

    /// The bytes from the peer did not decode (malformed or oversized frame):
    /// tell it why and close.
    package mutating func protocolError(_ error: SyncError) -> [Action] {
        guard state != .closed else { return [] }
        return [.log("protocol error from the peer: \(error)")] + fail(error)
    }

    /// We are closing on purpose (shutdown, peer removed).
    package mutating func close(reason: String) -> [Action] {
        guard state != .closed else { return [] }
        let wasOpen = state != .idle
        state = .closed
        return (wasOpen ? [.send(.goodbye(reason: reason))] : []) + [.close(nil)]
    }
}
