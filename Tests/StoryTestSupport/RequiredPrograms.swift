import Foundation
package import Testing

/// Programs a test checks its outputs with (poppler, librsvg, ffmpeg,
/// Chromium, openssl …), and where Debian has them.
package enum RequiredProgram {
    /// The Debian package of each program the tests use (`.ci/run` installs them all).
    static let packages: [String: String] = [
        "pdfinfo": "poppler-utils", "pdftoppm": "poppler-utils", "pdfimages": "poppler-utils", "pdftotext": "poppler-utils",
        "pdffonts": "poppler-utils", "rsvg-convert": "librsvg2-bin", "ffmpeg": "ffmpeg", "ffprobe": "ffmpeg", "chromium": "chromium",
        "openssl": "openssl", "unzip": "unzip", "ip": "iproute2",
    ]

    /// Whether `name` is an executable on PATH (or, with a slash, at that path).
    package static func isInstalled(_ name: String) -> Bool {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
    }

    /// Whether this is CI (`.ci/run` sets `STORYTELLER_CI=1`): there a missing
    /// program fails the tests that need it instead of skipping them.
    package static var isCI: Bool { ProcessInfo.processInfo.environment["STORYTELLER_CI"] == "1" }

    /// Why a test that needs `programs` cannot run here, or nil: it can.
    package static func missing(_ programs: [String]) -> String? {
        let missing = programs.filter { !isInstalled($0) }
        guard !missing.isEmpty else { return nil }
        let install = Set(missing.map { packages[($0 as NSString).lastPathComponent] ?? $0 }).sorted()
        return
            "needs \(missing.joined(separator: ", ")), not installed here (Debian: apt install \(install.joined(separator: " ")); .ci/run installs it)"
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only where `programs` are installed: elsewhere it is
    /// skipped, with the reason and the package to install. In CI it always
    /// runs, so a missing program fails it rather than hiding it.
    package static func requires(_ programs: String..., sourceLocation: SourceLocation = #_sourceLocation) -> Self {
        let reason = RequiredProgram.missing(programs)
        return .enabled(
            if: reason == nil || RequiredProgram.isCI, Comment(rawValue: reason ?? "needs \(programs.joined(separator: ", "))"),
            sourceLocation: sourceLocation)
    }
}
