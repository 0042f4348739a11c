import Foundation
import StoryAPI

// What the CLI prints with `--json` for work it did itself (files written,
// a restore, both versions): typed, and encoded as the daemon's answers are.

/// A file the CLI wrote from the daemon's answer.
struct FileWritten: Encodable {
    var out: String
    var bytes: Int
    /// png, svg or pdf (`render`).
    var format: String?
    /// The print sheet's pages.
    var pages: Int?
    /// file or directory (`export html`), and the files written for a directory.
    var form: String?
    var files: Int?
}

/// A package, backup or other single file saved at `path`.
struct Saved: Encodable {
    var path: String
    var bytes: Int
    var project: String?
}

/// `export images`: the shots' PNGs and the contact sheet.
struct ImagesWritten: Encodable {
    var out: String
    var shots: [String]
    var contactSheet: String
}

/// `restore`: the database put back, and where the one it replaced was kept (null: none was there).
struct Restored: Encodable {
    var restored: String
    var from: String
    var replacedKeptAs: String?

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(restored, forKey: .restored)
        try container.encode(from, forKey: .from)
        try container.encode(replacedKeptAs, forKey: .replacedKeptAs)
    }

    private enum CodingKeys: String, CodingKey { case restored, from, replacedKeptAs }
}

/// `tags list`: the project's tags, and each tagged shot's.
struct TagListing: Encodable {
    struct Shot: Encodable {
        var id: String
        var label: String
        var tags: [String]
    }

    var project: [String]
    var shots: [Shot]
}

/// `version`: this CLI's, and the daemon's when one answers.
struct VersionsAnswer: Encodable {
    var cli: String
    var daemon: String?
    var api: String?
}

/// Prints an answer as JSON, as the daemon's are printed (keys sorted).
func printJSON(_ value: some Encodable) throws {
    print(String(decoding: try API.encoder.encode(value), as: UTF8.self))
}
