/// The rules for a tag of a project or a shot (docs/crdt.md, "Tags"): what a
/// person types is trimmed of surrounding whitespace; the result is 1…64
/// UTF-8 bytes without control characters. Two spellings that differ only
/// in case are one tag (`key`); the spelling of its newest add is shown.
package enum Tag {
    /// Most UTF-8 bytes in one tag.
    package static let maximumBytes = 64
    /// Most tags one project or shot carries. Checked by the editor only:
    /// concurrent adds on two machines may together pass it, and a receiver
    /// refusing them would split the replicas.
    package static let maximumPerObject = 100

    /// The tag as stored: `text` trimmed of surrounding whitespace.
    /// - Throws: `DocumentError(.invalidValue)` naming the tag when it is
    ///   empty, too long or holds a control character.
    package static func normalized(_ text: String) throws(DocumentError) -> String {
        let trimmed = String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        guard !trimmed.isEmpty else { throw DocumentError(.invalidValue, "'tag' must not be empty") }
        guard trimmed.utf8.count <= maximumBytes else {
            throw DocumentError(
                .invalidValue, "'tag' is \(trimmed.utf8.count) bytes, at most \(maximumBytes) (\"\(trimmed.prefix(16))…\")")
        }
        guard !trimmed.unicodeScalars.contains(where: isControl) else {
            throw DocumentError(.invalidValue, "'tag' must not hold control characters (tabs, line breaks)")
        }
        return trimmed
    }

    /// Whether `name` is a tag as stored (what `normalized` returns); the
    /// decoders check every tag a peer sends with it.
    static func isValid(_ name: String) -> Bool {
        (try? normalized(name)) == name
    }

    /// The key two spellings of one tag share: its lower case.
    package static func key(_ name: String) -> String { name.lowercased() }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }
}

/// One tag of one object, as an observed-remove set (OR-set): every add
/// is a dot (its operation id) with the spelling it gave; a remove tombstones
/// the dots its author had seen, keeping for each the id of the remove.
/// The tag is on the object while some dot is not removed, so an add
/// concurrent with a remove survives it. Joining two entries is the union of
/// both maps (the larger remover for a dot both removed).
struct TagEntry: Hashable, Sendable {
    /// Every add's dot and spelling.
    var adds: [OpID: String] = [:]
    /// Removed dots, each with the (largest) id of a remove that removed it.
    var removed: [OpID: OpID] = [:]

    /// The dots not removed, ascending. O(adds).
    var liveDots: [OpID] { adds.keys.filter { removed[$0] == nil }.sorted() }

    /// Whether the tag is on the object.
    var isLive: Bool { adds.keys.contains { removed[$0] == nil } }

    /// The spelling shown: the newest live add's; nil when the tag is not on the object.
    var spelling: String? { liveDots.last.map { adds[$0]! } }

    /// The last write that decided whether the tag is on, as undo sees it:
    /// the newest live dot, or when none is live, the newest remove.
    var stamp: OpID? {
        if let dot = liveDots.last { return dot }
        return removed.values.max()
    }

    /// Joins another entry for the same object and tag.
    mutating func merge(_ other: TagEntry) {
        adds.merge(other.adds) { mine, _ in mine }
        removed.merge(other.removed) { max($0, $1) }
    }
}
