/// A name given to a version of a project ("client review 2"), kept in the
/// project document so every replica that shares it sees it. Last writer
/// wins per name (by the id of the operation that wrote it); a name taken
/// away is kept with no version, so a concurrent older write cannot bring
/// it back.
package struct VersionName: Hashable, Sendable {
    /// The name, as given (compared case-sensitively; 1 to 100 characters).
    package var name: String
    /// The version it names; nil once the name was taken away.
    package var version: VersionVector?
    /// The operation that wrote it.
    package var stamp: OpID
    /// When it was written (the author's clock; informational).
    package var time: Int64

    /// Creates a record.
    package init(name: String, version: VersionVector?, stamp: OpID, time: Int64) {
        self.name = name
        self.version = version
        self.stamp = stamp
        self.time = time
    }

    /// Most characters in a name.
    package static let maximumLength = 100

    /// Whether `name` may name a version: 1 to 100 characters, not only
    /// spaces, no control characters.
    package static func isValid(_ name: String) -> Bool {
        name.count <= maximumLength && name.contains { !$0.isWhitespace }
            && !name.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}
