import ArgumentParser
import Foundation
import StoryAPI
import StoryClient

/// `--at VERSION|TIME`: the commands that can show a project as it was
/// (`projects show`, `render`, `export pdf`, `images`, `animatic`, `edl`, `fcpxml`). Read-only:
/// the present is not touched.
struct AtOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Show the project as it was at this version: an id from `storyteller history`, a name from "
                + "`storyteller versions list`, or a time "
                + "(2026-11-25T14:00 in local time, 2026-11-25T14:00Z in UTC, 2026-11-25 for the end of that day, yesterday).",
            valueName: "version|time"))
    var at: String?

    /// `at=…` for a query, empty without `--at`. A time is read here, in this
    /// machine's time zone, and sent in UTC.
    var query: String {
        guard let at else { return "" }
        return "at=" + segment(Self.sent(at))
    }

    /// A version as sent to the daemon: a time read here, in this machine's
    /// time zone, and sent in UTC; anything else as given.
    static func sent(_ text: String) -> String {
        let word = text.trimmingCharacters(in: .whitespaces)
        return word.lowercased() == "now" ? word : API.parseTime(word).map { API.isoTime(milliseconds: $0) } ?? word
    }

    /// Makes `names` look up scenes, shots and layers of `project` as they
    /// were at the version (a shot deleted since still has its label there).
    func lookUpNames(of project: String, with names: Names, options: ClientOptions) throws {
        guard at != nil else { return }
        let response = try options.raw("GET", "/v1/projects/\(segment(project))?points=false&\(query)")
        names.remember(try API.decoder.decode(API.Project.self, from: response.body), of: project)
    }
}
