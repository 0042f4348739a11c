import ArgumentParser
import Foundation
import StoryAPI
import StoryClient
import StoryCore

/// `storyteller tags add|remove|list`: tags of a project and of its shots
/// (docs/crdt.md, "Tags").
struct Tags: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Tags of a project and its shots (add, remove, list).",
        discussion: """
            A tag is at most 64 bytes; spaces around it are dropped, and case does not matter when \
            matching ("Night" and "night" are one tag; the newest spelling is shown). `projects list --tag` \
            lists the projects with a tag, `search` finds tags, and exports take `--tag` to draw only \
            the shots carrying one.
            """,
        subcommands: [List.self, Add.self, Remove.self], defaultSubcommand: List.self)

    static let wordsHelp = ArgumentHelp(
        "Optionally a shot (its label, 1-2 or 1B, or an id prefix with its @), then the tags. The first word is the shot "
            + "when it names one of the project's shots and tags follow it.",
        valueName: "shot-or-tag")

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put tags on a project, or on one of its shots.",
            discussion: """
                The project may be left out after `storyteller use PROJECT` (a first word that names no \
                project is then the shot or a tag).

                Examples:
                  storyteller tags add "Night Train" "client review" approved
                  storyteller tags add "Night Train" 1-2 night exterior
                  storyteller use "Night Train"; storyteller tags add 1-2 night
                """)
        @Argument(help: Help.project) var project: String
        @Argument(help: Tags.wordsHelp) var words: [String] = []
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func run() throws {
            try Tags.edit(project, words, adding: true, session: editOptions.session, options: options)
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take tags off a project, or off one of its shots (in any case).",
            discussion: """
                A tag added on another machine that this one has not received yet stays (it was not seen). \
                The project may be left out after `storyteller use PROJECT`, as for `tags add`.

                Examples:
                  storyteller tags remove "Night Train" approved
                  storyteller tags remove "Night Train" 1-2 NIGHT
                """)
        @Argument(help: Help.project) var project: String
        @Argument(help: Tags.wordsHelp) var words: [String] = []
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func run() throws {
            try Tags.edit(project, words, adding: false, session: editOptions.session, options: options)
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A project's tags and its shots' tags.",
            discussion: "Example:\n  storyteller tags list \"Night Train\"")
        @Argument(help: Help.project) var project: String?
        @OptionGroup var options: ClientOptions

        func run() throws {
            let names = Names(options)
            let body = try names.structure(of: try names.project(project))
            let shots = body.scenes.flatMap(\.shots).filter { !$0.tags.isEmpty }
            if options.json {
                return try printJSON(TagListing(project: body.tags, shots: shots.map { .init(id: $0.id, label: $0.label, tags: $0.tags) }))
            }
            print("project: \(body.tags.isEmpty ? "(no tags)" : body.tags.joined(separator: ", "))")
            for shot in shots { print("shot \(shot.label): \(shot.tags.joined(separator: ", "))") }
        }
    }

    /// The shot `word` names, if it names one: its label (`1-2`, `1B`, in
    /// any case) or an id prefix with its `@` (a bare number is a tag, not
    /// the prefix of an id that happens to start with it).
    static func shot(named word: String, in project: API.Project) throws -> API.Candidate? {
        let candidates = API.shotCandidates(project)
        let folded = word.trimmingCharacters(in: .whitespaces).lowercased()
        guard folded.contains("@") || candidates.contains(where: { $0.names.contains { $0.lowercased() == folded } }) else { return nil }
        return try? API.resolve(word, among: candidates, kind: "shot")
    }

    /// Adds or removes the tags in `words` (after an optional shot) as one edit.
    static func edit(_ project: String, _ words: [String], adding: Bool, session: String?, options: ClientOptions) throws {
        let names = Names(options)
        // After `storyteller use`, the project may be left out: a first word
        // that names no project is then the shot or the first tag.
        var words = words
        var project: String? = project
        if let first = project, try names.projectLeftOut(before: first) {
            words.insert(first, at: 0)
            project = nil
        }
        let id = try names.project(project)
        var tags = words
        var object = API.ObjectReference.id(.root)
        var shotLabel: String?
        if words.count >= 2, let shot = try Self.shot(named: words[0], in: names.structure(of: id)) {
            object = try names.shot(shot.id, in: id)
            shotLabel = (try? names.shotDetail(object, in: id))?.label ?? words[0]
            tags.removeFirst()
        }
        guard !tags.isEmpty else {
            printError("give the tags to \(adding ? "add" : "remove") (after the project, and the shot if any)")
            throw ExitCode(64)
        }
        var normalized: [String] = []
        for tag in tags {
            do {
                normalized.append(try Tag.normalized(tag))
            } catch {
                printError(error.message)
                throw ExitCode(64)
            }
        }
        let request = API.EditRequest(
            ops: normalized.map { adding ? .addTag(object, tag: $0) : .removeTag(object, tag: $0) }, session: session)
        let response = try options.raw("POST", "/v1/projects/\(segment(id))/edits", body: try API.encoder.encode(request))
        if options.json {
            print(String(decoding: response.body, as: UTF8.self))
            return
        }
        let target = shotLabel.map { "shot \($0)" } ?? "the project"
        print("\(adding ? "tagged" : "untagged") \(target): \(normalized.joined(separator: ", "))")
    }
}
