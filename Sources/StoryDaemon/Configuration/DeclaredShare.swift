import Foundation
package import StoryCore
import TOMLKit

/// A share declared in the config file, for provisioning a machine:
///
/// ```toml
/// [[share]]
/// path = "Films/Night Train"   # a project or folder as `storyteller tree` shows it, or "library"
/// peer = "edit-suite"          # a peer id, or the name of a [[peer]] in this file
/// read-only = true             # default false: read-write
/// ```
///
/// Each is made once, as `storyteller share` makes it, at the first start
/// where its path names a project or folder here and its peer is a
/// configured peer; the store remembers it was made (the path, the peer and
/// the mode). From then on it is an ordinary share: an `unshare` or a change
/// of mode at run time holds, for giving rights is a signed change replicated
/// to every member, and a file re-applying it at each start would fight
/// them. A table that changes (another mode, path or peer) is made again at
/// the next start.
package struct DeclaredShare: Equatable, Sendable {
    /// A project's or folder's library path (`Films/Night Train`), or `library`.
    package var path: String
    package var peer: PeerID
    /// The peer's name when the table named it by a `[[peer]]`'s name.
    package var peerName: String?
    package var isReadOnly: Bool
    /// Where its `[[share]]` table is (`FILE:LINE`).
    package var source: String

    package init(path: String, peer: PeerID, peerName: String? = nil, isReadOnly: Bool = false, source: String) {
        self.path = path
        self.peer = peer
        self.peerName = peerName
        self.isReadOnly = isReadOnly
        self.source = source
    }

    /// The keys a `[[share]]` table may have.
    package static let keys = ["path", "peer", "read-only"]

    /// The settings key under which the store remembers that this share was
    /// made (its value: the mode it was made with).
    var madeKey: String { "declared-share \(peer) \(path)" }

    /// The shares of the `share` key of a config file: an array of tables,
    /// each checked strictly (no unknown key, a path, a peer that is an id or
    /// the name of one of `peers`, a boolean `read-only`, no share twice).
    /// - Parameters:
    ///   - path: the file, and `text` its contents, for `FILE:LINE` in errors.
    ///   - peers: the file's `[[peer]]` tables, whose names `peer` may give.
    /// - Throws: `ConfigError` naming the file, the line and the key.
    static func shares(from value: any TOMLValueConvertible, path: String, text: String, peers: [DeclaredPeer]) throws(ConfigError)
        -> [DeclaredShare]
    {
        var shares: [DeclaredShare] = []
        for declared in try TableLines.tables("share", of: value, keys: keys, path: path, text: text) {
            let table = declared.table
            func source(_ key: String? = nil) -> String { declared.source(key) }
            guard let pathValue = table["path"] else {
                throw ConfigError(
                    source: source(), key: "share",
                    problem: "has no 'path' (a project or folder as `storyteller tree` shows it, e.g. \"Films/Night Train\", or \"library\")")
            }
            guard let sharePath = pathValue.string?.trimmingCharacters(in: .whitespaces), !sharePath.isEmpty,
                !sharePath.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else {
                throw ConfigError(
                    source: source("path"), key: "share.path",
                    problem: "must be a project's or folder's path as `storyteller tree` shows it, or \"library\", not \(pathValue.debugDescription)")
            }
            guard let peerValue = table["peer"] else {
                throw ConfigError(
                    source: source(), key: "share", problem: "has no 'peer' (a peer id, or the name of a [[peer]] in this file)")
            }
            guard let peerText = peerValue.string else {
                throw ConfigError(source: source("peer"), key: "share.peer", problem: "must be a string, not a \(peerValue.type)")
            }
            var share: DeclaredShare
            if let id = PeerID(peerText) {
                share = DeclaredShare(path: sharePath, peer: id, peerName: peers.first { $0.id == id }?.name, source: source())
            } else if let named = peers.first(where: { $0.name == peerText }) {
                share = DeclaredShare(path: sharePath, peer: named.id, peerName: peerText, source: source())
            } else {
                let names = peers.compactMap(\.name)
                throw ConfigError(
                    source: source("peer"), key: "share.peer",
                    problem: "'\(peerText)' is neither a peer id nor the name of a [[peer]] in this file"
                        + (names.isEmpty ? "" : " (named: \(names.joined(separator: ", ")))"))
            }
            if let readOnlyValue = table["read-only"] {
                guard let flag = readOnlyValue.bool else {
                    throw ConfigError(
                        source: source("read-only"), key: "share.read-only", problem: "must be true or false, not \(readOnlyValue.debugDescription)")
                }
                share.isReadOnly = flag
            }
            if let first = shares.first(where: { $0.path == share.path && $0.peer == share.peer }) {
                throw ConfigError(
                    source: source(), key: "share", problem: "shares '\(share.path)' with \(share.peer.short)… again (first at \(first.source))")
            }
            shares.append(share)
        }
        return shares
    }

    /// The share as a `[[share]]` table, with where it was declared (`--print-config`).
    var toml: String {
        let quoted = TableLines.quoted
        return [
            "[[share]]  # \(source)", "path = \(quoted(path))",
            "peer = \(quoted(peer.description))" + (peerName.map { "  # \($0)" } ?? ""), "read-only = \(isReadOnly)",
        ].joined(separator: "\n") + "\n"
    }
}
