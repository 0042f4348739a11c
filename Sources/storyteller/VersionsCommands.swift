import ArgumentParser
import Foundation
import StoryAPI

/// `versions tag|untag|list`: names for versions ("client review 2"), kept
/// in the project so every machine sharing it has them.
struct Versions: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Name versions of a project (synced to everyone who shares it), and list the names.",
        discussion: """
            A name works wherever a version does: `projects show --at NAME`, `render`, `export pdf`, \
            `export images`. Naming again moves the name; the last one named wins everywhere.

            Examples:
              storyteller versions tag "Night Train" "client review 2"
              storyteller versions tag "Night Train" "before the rewrite" --at 2026-11-24T17:00
              storyteller versions list "Night Train"
              storyteller versions untag "Night Train" "client review 2"
            """,
        subcommands: [List.self, Tag.self, Untag.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The project's named versions.", discussion: "Example:\n  storyteller versions list \"Night Train\"")
        @Argument(help: Help.project) var project: String?
        @OptionGroup var options: ClientOptions

        func run() throws {
            let names = Names(options)
            let id = try names.project(project)
            let entries = try options.call([API.VersionNameEntry].self, "GET", "/v1/projects/\(segment(id))/versions/names")
            guard !options.json else { return }
            guard !entries.isEmpty else {
                print("no named versions (storyteller versions tag PROJECT NAME)")
                return
            }
            let me = try? names.quietIdentity()
            printTable(
                ["NAME", "VERSION", "NAMED", "BY"],
                entries.map { [$0.name, $0.version, isoTime(milliseconds: $0.time), names.who($0.author, local: false, me: me)] })
        }
    }

    struct Tag: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Name a version of a project (now, or the one --at gives).",
            discussion: """
                Examples:
                  storyteller versions tag "Night Train" "client review 2"
                  storyteller versions tag "Night Train" "before the rewrite" --at 3f9a1c02
                """)
        @Argument(help: Help.project) var project: String?
        @Argument(help: "The name (1 to 100 characters).") var name: String?
        @OptionGroup var past: AtOption
        @OptionGroup var options: ClientOptions

        mutating func validate() throws {
            (project, name) = try shiftedForCurrentProject(project, name, "NAME")
        }

        func run() throws {
            let id = try Names(options).project(project)
            let at = past.at.map { text in
                text.lowercased() == "now" ? text : API.parseTime(text).map { API.isoTime(milliseconds: $0) } ?? text
            }
            let entry = try options.call(
                API.VersionNameEntry.self, "POST", "/v1/projects/\(segment(id))/versions/names", body: API.NameVersion(name: name!, at: at))
            if !options.json { print("named version \(entry.version) \"\(entry.name)\"") }
        }
    }

    struct Untag: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take a version's name away (the version itself stays in the history).",
            discussion: "Example:\n  storyteller versions untag \"Night Train\" \"client review 2\"")
        @Argument(help: Help.project) var project: String?
        @Argument(help: "The name.") var name: String?
        @OptionGroup var options: ClientOptions

        mutating func validate() throws {
            (project, name) = try shiftedForCurrentProject(project, name, "NAME")
        }

        func run() throws {
            let id = try Names(options).project(project)
            let entry = try options.call(
                API.VersionNameEntry.self, "DELETE", "/v1/projects/\(segment(id))/versions/names/\(segment(name!))")
            if !options.json { print("took the name \"\(entry.name)\" away from version \(entry.version)") }
        }
    }
}
