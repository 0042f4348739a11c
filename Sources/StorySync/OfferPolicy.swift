import StoryCore
import StoryStore

/// What this daemon knows of a document a configured peer advertised and
/// the session does not sync yet, read from the store.
struct OfferFacts: Sendable {
    /// The document as stored here (nil: not held).
    var existing: DocumentRecord?
    /// The rights the peer lost while it was away, up to this version (it has
    /// not been told yet).
    var farewell: VersionVector?
    /// Its role here when the document was shared with the peer after the
    /// session read its shares.
    var sharedRole: Role?
    /// The document was purged here after the trash.
    var purged: PurgedRecord?
    /// A user declined it from this peer.
    var declined = false
    /// What this peer shares is taken without asking.
    var accepting = false
}

/// The consent to a peer's offer, decided without I/O (docs/protocol.md,
/// "Advertise"): taking a document is the consent of this daemon, never a
/// right of the offerer. A document held here syncs only with the members
/// of its access list, so advertising one (or having been unshared) obtains
/// nothing; one purged here comes back only with changes made since; one a
/// user declined stays declined; the rest is taken, or kept for a user to
/// accept, as the peer's auto-accept says. `PeerManager.take` reads the
/// facts and carries the decision out.
enum OfferPolicy {
    enum Decision: Hashable, Sendable {
        /// Not a kind of document this build knows.
        case invalid
        /// Held here and not shared with the peer: ignored.
        case existing(DocumentKind)
        /// Held here; the peer already knows it lost its rights up to what it
        /// has now: the pending farewell is forgotten, the offer ignored.
        case existingFarewellKnown(DocumentKind)
        /// Held here; the peer lost its rights while away: it is told so.
        case farewell(DocumentKind, upTo: VersionVector)
        /// Shared with the peer since the session began: it syncs.
        case shared(DocumentKind, Role)
        /// Purged here with nothing new since: not taken back.
        case purged(PurgedRecord)
        /// A user declined it from this peer.
        case declined
        /// Taken now (the peer's shares are taken without asking).
        case take(DocumentKind)
        /// Kept for a user to accept or decline.
        case keep(DocumentKind)
    }

    static func decide(_ offer: Message.Advertisement, facts: OfferFacts) -> Decision {
        guard let kind = DocumentKind(rawValue: Int64(offer.kind)) else { return .invalid }
        if let existing = facts.existing {
            guard let cap = facts.farewell else {
                // Shared with the peer after this session read its shares: another
                // session with it (crossing dials) took it meanwhile, or an access
                // change is on its way. It syncs here too, else this session never would.
                guard let role = facts.sharedRole else { return .existing(existing.kind) }
                return .shared(existing.kind, role)
            }
            return cap.isCovered(by: offer.version) ? .existingFarewellKnown(existing.kind) : .farewell(existing.kind, upTo: cap)
        }
        if let purged = facts.purged, offer.version.isCovered(by: purged.version) { return .purged(purged) }
        if facts.declined { return .declined }
        return facts.accepting ? .take(kind) : .keep(kind)
    }
}
