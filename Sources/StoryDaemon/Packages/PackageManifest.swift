import Foundation

/// `manifest.json` of a project package (`.storyboard`, a zip file): what
/// the package is, which project at which version, and the SHA-256 of every
/// other entry. The manifest is signed by the exporting daemon
/// (`manifest.sig` over `PackageManifest.signedPrefix` ‖ the manifest's
/// bytes, `exporter.der` its certificate), so the signature covers every
/// entry through the hashes. docs/control-api.md, "Project packages".
struct PackageManifest: Codable, Sendable {
    /// `format` of every package.
    static let formatName = "storyteller-project-package"
    /// The format this daemon writes and the newest it reads.
    static let currentFormatVersion = 1
    /// What the signature covers before the manifest's bytes (domain separation).
    static let signedPrefix = Array("storyteller/package/1\n".utf8)

    /// Entry names of the fixed parts.
    enum Path {
        static let manifest = "manifest.json"
        static let signature = "manifest.sig"
        static let certificate = "exporter.der"
        static let readme = "README.txt"
        static let snapshot = "project/snapshot.bin"
        static let changes = "project/changes.bin"
        /// A PDF print sheet of every shot, for people without Storyteller
        /// (role `sheets`); listed in `optional` instead when it could not be drawn.
        static let sheets = "sheets.pdf"
        static func media(_ hex: String) -> String { "media/\(hex)" }
    }

    /// What an entry is for; an importer verifies every entry's hash and uses
    /// the roles it knows (a newer writer may add others).
    enum Role {
        static let snapshot = "snapshot"
        static let changes = "changes"
        static let media = "media"
        static let thumbnail = "thumbnail"
        static let sheets = "sheets"
        static let readme = "readme"
    }

    /// Always `formatName`.
    var format: String
    /// The package format; an importer refuses one newer than it reads.
    var formatVersion: Int
    /// Who wrote it (`storytellerd 0.9.0`), informational.
    var generator: String
    /// The project's document id.
    var project: String
    var title: String?
    /// The peer id of the daemon that made and signed the package.
    var exportedBy: String
    /// When, in milliseconds since 1970 (informational).
    var exportedAt: Int64
    /// The project's version vector: replica (16 hex digits) → changes held.
    var version: [String: UInt64]
    /// How many changes `project/changes.bin` holds (compaction may have
    /// dropped the oldest; the snapshot covers them).
    var changeCount: Int
    /// Every entry but the manifest and its signature.
    var entries: [Entry]
    /// The visible shots in board order, with their thumbnails.
    var shots: [Shot]
    /// Blobs the project references that this machine did not hold whole, so
    /// they are not in the package (an importer's peers may have them).
    var missingMedia: [String]
    /// Entries a package may carry that this one does not, with what they are.
    var optional: [String: String]

    struct Entry: Codable, Sendable {
        var path: String
        var role: String
        var bytes: UInt64
        /// SHA-256 of the entry's bytes, 64 hex digits.
        var sha256: String
        /// For media: the MIME type.
        var type: String?
    }

    struct Shot: Codable, Sendable {
        var id: String
        /// `1-2`: scene 1, shot 2.
        var label: String
        var caption: String?
        /// The thumbnail's entry (PNG).
        var thumbnail: String?
    }

    /// The first fields alone: read before the rest, so a package of a newer
    /// format is refused as such rather than as a manifest that does not decode.
    struct Header: Decodable {
        var format: String?
        var formatVersion: Int?
    }
}
