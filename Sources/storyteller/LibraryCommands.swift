import ArgumentParser
import Foundation
import StoryAPI
import StoryClient

/// `tree`: the library's folders and projects, indented.
struct Tree: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The library: folders and projects (and what is in the trash).",
        discussion: "Projects show with the short id commands take.\n\nExamples:\n  storyteller tree\n  storyteller tree --trash")
    @Flag(help: "Also list the trash.") var trash = false
    @OptionGroup var options: ClientOptions

    func run() throws {
        let library = try options.call(API.Library.self, "GET", "/v1/library")
        guard !options.json else { return }
        let projects = library.nodes.compactMap(\.project) + library.shared.flatMap { $0.nodes.compactMap(\.project) }
        let short = API.shortIDs(projects)
        let shown = library.nodes.filter { !$0.inTrash }
        if shown.isEmpty && library.shared.isEmpty { print("(the library is empty: storyteller projects create NAME)") }
        for node in shown { print(Self.line(node, short: short)) }
        let trashed = library.nodes.filter(\.inTrash)
        let deletedShared = library.shared.filter { $0.deletedAt != nil }
        if trash && !(trashed.isEmpty && deletedShared.isEmpty) {
            print("Trash")
            for node in trashed {
                let from = node.formerPath.map { $0.isEmpty ? "" : "  (from \(text($0)))" } ?? ""
                print("  " + Self.line(node, short: short) + (node.depth == 0 ? from : ""))
            }
            for shared in deletedShared { print("  \(shared.name ?? "Library")/  (a shared folder, deleted for everyone)") }
        }
        let names = Names(options)
        for shared in library.shared where shared.deletedAt == nil {
            print("")
            let owner = shared.owner.map { "\(names.who($0, local: false, me: nil)) (\($0.prefix(7)))" } ?? "a peer"
            let rights = shared.role == "editor" ? "you may edit" : shared.role == "owner" ? "yours" : "read-only for you"
            print("\(shared.name ?? "Library")/  (shared by \(owner), \(rights))")
            for node in shared.nodes where !node.inTrash { print("  " + Self.line(node, short: short)) }
        }
    }

    /// "Films/" for a folder, "Night Train  3f2a9c1" for a project (its short id, as commands take it).
    static func line(_ node: API.LibraryNode, short: [String: String]) -> String {
        let indent = String(repeating: "  ", count: node.depth)
        if node.kind == "folder" { return "\(indent)\(text(node.name))/" + (node.folder != nil && node.library == nil ? "  (shared folder)" : "") }
        let missing = node.unavailable.map { "  (unavailable: \($0))" } ?? (node.available == false ? "  (not on this machine)" : "")
        let id = node.project.map { short[$0] ?? $0 } ?? "-"
        return "\(indent)\(text(node.name))  \(id)\(missing)"
    }
}

/// `folders …`: the library's folder tree. A folder (or project entry) is
/// named by its id, by `root`, `trash` or `incoming`, or by a path of names
/// from the root such as `Films/Shorts`.
struct Folders: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Library folders: create, rename, describe, move, reorder, delete, restore.",
        discussion: "FOLDER and NODE are an id (see `storyteller tree`), root, incoming, or a path of names like Films/Shorts.",
        subcommands: [Create.self, Rename.self, Describe.self, Move.self, Reorder.self, Delete.self, Restore.self])

    /// "deleted Shorts": the name people gave it (`--json` has the id).
    static func report(_ node: API.LibraryNode, _ verb: String, options: ClientOptions) {
        guard !options.json else { return }
        print("\(verb) \(node.name ?? node.id)")
    }

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a folder (--json: with its id).",
            discussion: "Examples:\n  storyteller folders create Films\n  storyteller folders create Shorts --in Films")
        @Argument(help: "The folder's name.") var name: String
        @Option(name: .customLong("in"), help: "The folder to create it in (default: the root).") var parent: String?
        @Option(help: "Its position among the folder's children (default: last).") var index: Int?
        @OptionGroup var options: ClientOptions

        func run() throws {
            let node = try options.call(
                API.LibraryNode.self, "POST", "/v1/library/folders", body: API.CreateFolder(name: name, parent: parent, index: index))
            if !options.json { print("created folder \(text(node.name))" + (parent.map { " in \(text($0))" } ?? "")) }
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Rename a folder or project entry.", discussion: "Example:\n  storyteller folders rename Films/Shorts \"Short films\"")
        @Argument(help: Help.node) var node: String
        @Argument(help: "The new name.") var name: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            Folders.report(
                try options.call(API.LibraryNode.self, "PATCH", "/v1/library/nodes/\(segment(node))", body: API.UpdateNode(name: name)),
                "renamed", options: options)
        }
    }

    struct Describe: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set the description of a folder or project entry.",
            discussion: "Example:\n  storyteller folders describe Films \"Everything for the festival\"")
        @Argument(help: Help.node) var node: String
        @Argument(help: "The description.") var description: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            Folders.report(
                try options.call(API.LibraryNode.self, "PATCH", "/v1/library/nodes/\(segment(node))", body: API.UpdateNode(description: description)),
                "described",
                options: options)
        }
    }

    struct Move: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move a folder or project entry into another folder.",
            discussion: "Example:\n  storyteller folders move \"Films/Night Train\" --to Archive")
        @Argument(help: Help.node) var node: String
        @Option(help: "The folder to move it into.") var to: String
        @Option(help: "Its position there (default: last).") var index: Int?
        @OptionGroup var options: ClientOptions

        func run() throws {
            let body = API.MoveNode(folder: to, index: index)
            Folders.report(
                try options.call(API.LibraryNode.self, "POST", "/v1/library/nodes/\(segment(node))/move", body: body), "moved", options: options)
        }
    }

    struct Reorder: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move a folder or project entry to another position in its folder.",
            discussion: "Example:\n  storyteller folders reorder Films/Shorts 0")
        @Argument(help: Help.node) var node: String
        @Argument(help: "The new position (0 = first).") var index: Int
        @OptionGroup var options: ClientOptions

        func run() throws {
            Folders.report(
                try options.call(API.LibraryNode.self, "POST", "/v1/library/nodes/\(segment(node))/move", body: API.MoveNode(index: index)),
                "reordered",
                options: options)
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move a folder (and what it holds) to the trash.", discussion: "Example:\n  storyteller folders delete Films/Old")
        @Argument(help: Help.node) var node: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            Folders.report(try options.call(API.LibraryNode.self, "DELETE", "/v1/library/nodes/\(segment(node))"), "deleted", options: options)
        }
    }

    struct Restore: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Bring a folder back from the trash, into the folder it was in.",
            discussion: "Example:\n  storyteller folders restore Films/Old")
        @Argument(help: "The folder in the trash: its id, or its path as it was (`storyteller tree --trash`).") var node: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            Folders.report(try options.call(API.LibraryNode.self, "POST", "/v1/library/nodes/\(segment(node))/restore"), "restored", options: options)
        }
    }
}

/// `history PROJECT`: the project's versions (or changes), who made them and where.
struct History: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A project's versions, newest first: when, who, what, and in which shots.",
        discussion: """
            One person's burst of edits (their changes a few minutes apart at most) is one version. \
            Its id, the same on every machine, is what --at takes (`projects show`, `render`, \
            `export pdf`, `export images`), as does a time. --changes lists each change instead.

            Examples:
              storyteller history "Night Train" --limit 20
              storyteller history "Night Train" --shot 1-2 --since yesterday
              storyteller projects show "Night Train" --at 3f9a1c02
            """)
    @Argument(help: Help.project) var project: String?
    @Option(help: "At most this many versions, or changes with --changes (1 to 10000).") var limit = 50
    @Option(help: "Only versions that touched this shot (its label like 1-2, or its id).") var shot: String?
    @Option(help: "Only versions from this time on (2026-11-25T14:00 in local time, …Z for UTC, today, yesterday).")
    var since: String?
    @Flag(help: "List each change on its own, not grouped into versions.") var changes = false
    @OptionGroup var options: ClientOptions

    func validate() throws {
        if let since, API.parseTime(since) == nil {
            throw ValidationError("--since must be a time such as 2026-11-25T14:00 (local), 2026-11-25T14:00Z (UTC) or yesterday, not '\(since)'")
        }
    }

    func run() throws {
        let names = Names(options)
        let id = try names.project(project)
        let me = try? names.quietIdentity()
        if changes && shot == nil && since == nil {
            let history = try options.call(API.History.self, "GET", "/v1/projects/\(segment(id))/history?limit=\(limit)")
            guard !options.json else { return }
            printTable(
                ["TIME", "WHO", "WHAT", "WHERE"],
                history.changes.map { change in
                    [
                        isoTime(milliseconds: change.time), names.who(change.author, local: change.local, me: me), change.summary,
                        change.shots.joined(separator: ", "),
                    ]
                })
            if history.compacted { print("(older changes are folded into a snapshot)") }
            return
        }
        var query = "limit=\(limit)"
        if let shot { query += "&shot=\(segment(try names.shot(shot, in: id).description))" }
        if let since, let time = API.parseTime(since) { query += "&since=\(segment(API.isoTime(milliseconds: time)))" }
        let response = try options.raw("GET", "/v1/projects/\(segment(id))/versions?\(query)")
        let answer = try API.decoder.decode(API.Versions.self, from: response.body)
        if options.json && !changes { print(String(decoding: response.body, as: UTF8.self)) }
        if changes {
            let entries = Array(answer.versions.flatMap(\.changes).prefix(limit))
            if options.json {
                print(String(decoding: try API.encoder.encode(entries), as: UTF8.self))
                return
            }
            printTable(
                ["TIME", "WHO", "WHAT", "WHERE"],
                entries.map { change in
                    [
                        isoTime(milliseconds: change.time), names.who(change.author, local: change.local, me: me), change.summary,
                        change.shots.joined(separator: ", "),
                    ]
                })
            return
        }
        guard !options.json else { return }
        printTable(
            ["VERSION", "TIME", "WHO", "WHAT", "WHERE"],
            answer.versions.map { version in
                [
                    version.id, isoTime(milliseconds: version.time), names.who(version.author, local: version.local, me: me), version.summary,
                    version.shots.joined(separator: ", "),
                ]
            })
        if let checkpoints = answer.checkpoints, !checkpoints.isEmpty {
            print("\nKept from before (daily, then weekly checkpoints and named versions; `--at VERSION` shows one):")
            printTable(["VERSION", "TIME"], checkpoints.map { [$0.id, isoTime(milliseconds: $0.time)] })
        } else if answer.compacted {
            print("(older versions were compacted on this machine; the oldest it can show is \(answer.oldest))")
        }
    }
}

/// `watch`: follows the daemon's event stream, in sentences.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print changes and peer events as they happen (NDJSON with --json).",
        discussion: """
            Runs until interrupted, or until --count events were printed. A change reads
            "bob drew 1 stroke in Night Train › 1-2".

            Example:
              storyteller watch --project "Night Train"
            """)
    @Option(help: "Only events about this project (name, path, id or id prefix).") var project: String?
    @Option(help: "Stop after this many events.") var count: Int?
    @OptionGroup var options: ClientOptions

    func run() throws {
        let names = Names(options)
        var printed = 0
        var target = "/v1/events"
        if let project { target += "?project=\(segment(try names.project(project)))" }
        let me = try? names.quietIdentity()
        let failure: ControlClientResponse?
        do {
            failure = try options.client.stream(target) { line in
                guard let event = try? API.decoder.decode(API.Event.self, from: Data(line.utf8)) else { return true }
                if event.type == "hello" { return true }
                if options.json {
                    print(line)
                } else {
                    for sentence in Self.sentences(event, names: names, me: me) {
                        print("\(isoTime(milliseconds: event.time))  \(sentence)")
                    }
                }
                fflush(nil)
                printed += 1
                return count.map { printed < $0 } ?? true
            }
        } catch let error as ControlClientFailure {
            printError(error.isUnreachable ? "\(error.description) (is storytellerd running?)" : error.description)
            throw ExitCode(69)
        }
        if let failure {
            printError(UserWords.say(failure))
            throw ExitCode(1)
        }
        if let count, printed >= count { return }
        printError("the daemon ended the event stream (did it stop?)")
        throw ExitCode(69)
    }

    /// An event in words: "bob drew 1 stroke in Night Train › 1-2".
    static func sentences(_ event: API.Event, names: Names, me: String?) -> [String] {
        let peerName = event.peer.map { names.who($0, local: false, me: me) } ?? "a peer"
        let projectName = event.document.map { names.projectName($0) } ?? "a project"
        switch event.type {
        case "document.changed":
            guard let document = event.document, let count = event.changes, count > 0,
                let history = try? names.history(of: document, limit: min(count, 20))
            else {
                let who = event.origin == "local" ? "you" : peerName
                return ["\(who) changed \(projectName)" + (event.origin == "snapshot" ? " (caught up from a snapshot)" : "")]
            }
            return history.changes.reversed().map { change in
                let who = names.who(change.author, local: change.local, me: me)
                let place = change.shots.isEmpty ? projectName : "\(projectName) › \(change.shots.joined(separator: ", "))"
                return "\(who) \(change.summary) in \(place)"
            }
        case "library.changed": return ["the library changed" + (event.origin == "peer" ? " (from \(peerName))" : "")]
        case "document.created": return ["new \(event.kind ?? "document"): \(projectName)"]
        case "peer.connected": return ["\(peerName) connected"]
        case "peer.disconnected": return ["\(peerName) disconnected"]
        case "peer.pending":
            return ["unknown peer \(event.peer?.prefix(7) ?? "?") asks to connect from \(event.address ?? "?") (storyteller peers pending)"]
        case "peer.discovered": return ["\(peerName) heard on the LAN at \(event.address ?? "?")"]
        case "peer.caughtUp": return ["\(peerName) has everything of \(projectName)"]
        case "peers.changed": return ["the peer list changed"]
        case "media.started", "media.progressed", "media.completed", "media.failed":
            let blob = String((event.blob ?? "?").prefix(12))
            let size = TransferProgress.size(Int(event.bytes ?? 0))
            switch event.type {
            case "media.started": return ["receiving \(blob) (\(size)) from \(peerName)"]
            case "media.progressed":
                let percent = (event.bytes ?? 0) > 0 ? (event.heldBytes ?? 0) * 100 / (event.bytes ?? 1) : 0
                return ["receiving \(blob) from \(peerName): \(percent) %"]
            case "media.completed": return ["received \(blob) (\(size)) from \(peerName)"]
            default: return ["could not get \(blob) from \(peerName): \(event.reason ?? "?")"]
            }
        case "conflict.opened":
            return ["concurrent edits of a text in \(projectName): one value was kept, the other kept aside (storyteller conflicts \(projectName))"]
        case "shares.changed": return ["who shares \(projectName) changed"]
        case "trash.changed":
            guard let document = event.document,
                let summary = try? names.projectSummaries(deleted: true).first(where: { $0.id == document })
            else { return ["\(projectName) was purged from this machine"] }
            guard let trash = summary.trash else { return ["\(projectName) is out of the trash"] }
            guard trash.isForEveryone else { return ["\(projectName) is hidden on this machine"] }
            return ["\(names.who(trash.by, local: false, me: me)) deleted \(projectName) (storyteller projects restore brings it back)"]
        default: return [event.type]
        }
    }
}
