import ArgumentParser
import Foundation
import StoryAPI
import StoryClient

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
            let at = past.at.map(AtOption.sent)
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

/// `diff PROJECT FROM [TO]`: what changed between two versions.
struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "What changed in a project between two versions: scenes, shots, layers, strokes, text.",
        discussion: """
            FROM and TO are version ids (`storyteller history`), names (`storyteller versions list`) or \
            times (2026-11-25T14:00 in local time, …Z for UTC, yesterday); TO is now when left out.

            After `storyteller use PROJECT` the project may be left out: one word is FROM; of two, the first is \
            the project if it names one, else they are FROM and TO.

            Examples:
              storyteller diff "Night Train" yesterday
              storyteller diff "Night Train" "client review 2" 3f9a1c02 --json
              storyteller diff "client review 2"
            """)
    @Argument(help: Help.project) var project: String?
    @Argument(help: "The version to compare from.") var from: String?
    @Argument(help: "The version to compare to (default: now).") var to: String?
    @OptionGroup var options: ClientOptions

    func run() throws {
        let names = Names(options)
        var (project, from, to) = (self.project, self.from, self.to)
        if from == nil {
            (project, from) = (nil, project)
        } else if to == nil, let first = project, try names.projectLeftOut(before: first) {
            (project, from, to) = (nil, first, from)
        }
        guard let from else {
            printError("give the version to compare from (`storyteller history` lists them)")
            throw ExitCode(64)
        }
        let id = try names.project(project)
        var query = "from=" + segment(AtOption.sent(from))
        if let to { query += "&to=" + segment(AtOption.sent(to)) }
        let diff = try options.call(API.Diff.self, "GET", "/v1/projects/\(segment(id))/diff?\(query)")
        guard !options.json else { return }
        print("from version \(diff.from) to \(to == nil ? "now (\(diff.to))" : "version \(diff.to)")")
        if diff.items.isEmpty && diff.strokes.isEmpty && diff.texts.isEmpty {
            print("  no differences")
            return
        }
        func quoted(_ text: String?) -> String { text.map { "\"\($0)\"" } ?? "nothing" }
        for item in diff.items {
            switch item.change {
            case "moved": print("  \(item.place): moved (was \(item.before ?? "?"))")
            case "renamed": print("  \(item.place): renamed \(quoted(item.before)) → \(quoted(item.after))")
            default: print("  \(item.place): \(item.change)")
            }
        }
        for layer in diff.strokes {
            let parts = [(layer.added, "added"), (layer.erased, "erased"), (layer.changed, "changed")].filter { $0.0 > 0 }
                .map { "\($0.0) stroke\($0.0 == 1 ? "" : "s") \($0.1)" }
            print("  \(layer.place): \(parts.joined(separator: ", "))")
        }
        for text in diff.texts {
            if text.field == "duration" {
                print("  \(text.place) duration: \(text.before ?? "the default") → \(text.after ?? "the default")")
            } else {
                print("  \(text.place) \(text.field): \(quoted(text.before)) → \(quoted(text.after))")
            }
        }
    }
}

/// `restore PROJECT --to VERSION [--shot SHOT|--scene SCENE]`: the past brought
/// back as a new edit; `restore FILE`: a backup put back as the database.
struct RestoreVersion: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Bring a project (or one shot or scene) back to a version, as a new edit; or put a backup back.",
        discussion: """
            History is not rewritten: the restore is an edit on top (what was deleted since comes back, what \
            came since is deleted, what moved moves back, text and strokes are as they were), it merges with \
            what others do meanwhile like any edit, and `storyteller undo` takes it back. SHOT and SCENE are \
            named as they were at that version (a shot deleted since too).

            With a backup FILE (from `storyteller backup`) and no --to, the daemon's database is replaced by \
            it: the daemon must be stopped first (this refuses while it runs); the backup is checked whole, \
            the database it replaces is kept beside it (with its write-ahead log, so a stale log is never \
            replayed into the backup), and the next start takes a new replica id. Edits made since the backup \
            come back from the peers the projects are shared with. --data-dir names the daemon's state \
            directory (default: yours; the system daemon's is /var/lib/storyteller, as root).

            Examples:
              storyteller restore "Night Train" --to "client review 2"
              storyteller restore "Night Train" --to yesterday --shot 1-2
              storyteller restore ~/backups/storyteller-2026-11-27.sqlite
            """)
    @Argument(help: "A project (name, path, id or id prefix), or a backup file to put back.") var project: String?
    @Option(help: "The version: an id from `storyteller history`, a name, or a time (2026-11-25T14:00, …Z, yesterday).")
    var to: String?
    @Option(help: "With a backup FILE: the daemon's state directory.") var dataDir: String?
    @Option(help: "Only this shot (its label then, like 1-2, or its id).") var shot: String?
    @Option(help: "Only this scene (its number, title or id then).") var scene: String?
    @Option(help: "The undo session (default: the daemon's).") var session: String?
    @OptionGroup var options: ClientOptions

    func validate() throws {
        if shot != nil && scene != nil { throw ValidationError("give --shot or --scene, not both") }
    }

    func run() throws {
        guard let to else {
            guard let file = project, FileManager.default.fileExists(atPath: file) else {
                throw ValidationError("give --to VERSION to bring a project back to a version, or the path of a backup file to put it back")
            }
            return try BackupRestore.run(file, dataDirectory: dataDir, options: options)
        }
        let names = Names(options)
        let id = try names.project(project)
        let version = AtOption.sent(to)
        if shot != nil || scene != nil {
            let response = try options.raw("GET", "/v1/projects/\(segment(id))?points=false&at=\(segment(version))")
            names.remember(try API.decoder.decode(API.Project.self, from: response.body), of: id)
        }
        let body = API.RestoreVersion(
            to: version, shot: try shot.map { try names.shot($0, in: id).description },
            scene: try scene.map { try names.scene($0, in: id).description }, session: session)
        let restored = try options.call(API.Restored.self, "POST", "/v1/projects/\(segment(id))/versions/restore", body: body)
        guard !options.json else { return }
        let what = shot.map { "shot \($0)" } ?? scene.map { "scene \($0)" } ?? "the project"
        print(
            restored.changed
                ? "restored \(what) as it was at version \(restored.version): \(restored.summary) (storyteller undo takes it back)"
                : "\(what) is already as it was at version \(restored.version)")
    }
}
