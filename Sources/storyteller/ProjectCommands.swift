import ArgumentParser
import Foundation
import StoryAPI
import StoryClient
import StoryCore

struct Projects: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Storyboard projects.",
        subcommands: [
            List.self, Create.self, Show.self, Copy.self, Rename.self, Describe.self, SetFields.self, Delete.self, Restore.self, Purge.self,
        ],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The projects on this machine: name, place in the library, short id (* marks the current one).",
            discussion: """
                With --deleted, the projects in the trash too: deleted for everyone (by whom, when, and when this \
                machine purges it) or hidden on this machine only. With --tag, only the projects carrying that tag \
                (in any case; `storyteller tags add PROJECT TAG` puts one on). A TAGS column shows when some project has tags.

                Examples:
                  storyteller projects
                  storyteller projects list --deleted
                  storyteller projects list --tag "client review"
                """)
        @Flag(help: "Include deleted projects (the trash).") var deleted = false
        @Option(help: "Only the projects carrying this tag.") var tag: String?
        @OptionGroup var options: ClientOptions

        func run() throws {
            var query: [String] = deleted ? ["deleted=true"] : []
            if let tag { query.append("tag=" + segment(tag)) }
            let projects = try options.call(
                [API.ProjectSummary].self, "GET", "/v1/projects" + (query.isEmpty ? "" : "?" + query.joined(separator: "&")))
            guard !options.json else { return }
            guard !projects.isEmpty else {
                printError(Projects.noneListed(tag: tag, deleted: deleted, options: options))
                return
            }
            let names = Names(options)
            let library = try? names.libraryTree()
            let paths = library.map(API.projectPaths) ?? [:]
            let short = API.shortIDs(projects.map(\.id))
            let current = CurrentProject.chosen(for: options.client.path).map(\.0)
            let me = deleted ? try? names.quietIdentity() : nil
            let showsTags = projects.contains { !$0.tags.isEmpty }
            var header = deleted ? ["NAME", "IN LIBRARY", "DELETED", "PURGED", "ID"] : ["NAME", "IN LIBRARY", "ID"]
            if showsTags { header.insert("TAGS", at: header.count - 1) }
            printTable(
                header,
                projects.map { project in
                    let marker = current == project.id ? "* " : ""
                    let name = marker + (project.name ?? "(untitled)")
                    let path = paths[project.id]?.first.map { "/" + $0 } ?? ""
                    let id = short[project.id] ?? project.id
                    var row = deleted ? [name, path, trashWords(project.trash, names: names, me: me), purgeWords(project.trash)] : [name, path]
                    if showsTags { row.append(project.tags.joined(separator: ", ")) }
                    return row + [id]
                })
        }
    }

    /// Why the list is empty, in words (on stderr; the exit status stays 0):
    /// with a tag that only shots carry, which shots do.
    static func noneListed(tag: String?, deleted: Bool, options: ClientOptions) -> String {
        guard let tag else {
            return deleted ? "no projects, and none in the trash" : "no projects yet: `storyteller projects create NAME` makes one"
        }
        let wanted = tag.trimmingCharacters(in: .whitespaces).lowercased()
        let query = tag.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? tag
        let hits = (try? options.call([API.SearchHit].self, "GET", "/v1/search?q=\(query)")) ?? []
        let shots = hits.filter { hit in
            hit.field == "tags" && hit.object != nil
                && hit.text.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == wanted }
        }
        guard !shots.isEmpty else { return "no project carries the tag '\(tag)'" }
        let places = shots.prefix(5).map { "\($0.projectName ?? String($0.project.prefix(7))): \($0.label)" }
        let more = shots.count > 5 ? " and \(shots.count - 5) more" : ""
        return "no project carries the tag '\(tag)', but shots do (\(places.joined(separator: "; "))\(more)); "
            + "`storyteller search \(tag.contains(" ") ? "\"\(tag)\"" : tag)` lists them"
    }

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a project; prints its id.",
            discussion:
                "Examples:\n  storyteller projects create \"Night Train\"\n  storyteller projects create \"Night Train\" --folder Films/Shorts")
        @Argument(help: "The project's name (its title too).") var name: String
        @Option(help: "The library folder for it (id, or a path like Films/Shorts; default: the root).") var folder: String?
        @OptionGroup var options: ClientOptions

        func run() throws {
            let project = try options.call(API.Project.self, "POST", "/v1/projects", body: API.CreateProject(name: name, folder: folder))
            if !options.json { print(isatty(STDOUT_FILENO) == 1 ? "created \(name)  [\(project.id)]" : project.id) }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A project's scenes, shots and layers (now, or as they were at a version).",
            discussion: """
                Examples:
                  storyteller projects show "Night Train"
                  storyteller projects show "Night Train" --at 2026-11-24T17:00
                """)
        @Argument(help: Help.project) var project: String?
        @OptionGroup var past: AtOption
        @OptionGroup var options: ClientOptions

        func run() throws {
            let id = try Names(options).project(project)
            let query = past.query.isEmpty ? "" : "?" + past.query
            let body = try options.call(API.Project.self, "GET", "/v1/projects/\(segment(id))\(query)")
            guard !options.json else { return }
            var notes: [String] = []
            if let version = body.version { notes.append("as it was at version \(version)") }
            if body.legacy { notes.append("legacy: made before signed authorship, not synced; `projects copy` it to share") }
            if let trash = body.trash {
                notes.append(trash.isForEveryone ? "in the trash: deleted for everyone" : "in the trash: hidden on this machine")
            }
            switch body.role {
            case "reader": notes.append("read-only")
            case "none": notes.append("read-only: no longer shared with this machine")
            case "editor": notes.append("shared with this machine read-write")
            default: break
            }
            if body.conflicts != nil { notes.append("overwritten: \(overwritten(body.conflicts))") }
            print("\(text(body.title ?? body.name))  [\(body.id)]" + (notes.isEmpty ? "" : "  (\(notes.joined(separator: "; ")))"))
            if !body.tags.isEmpty { print("  tags: \(body.tags.joined(separator: ", "))") }
            if let description = body.description, !description.isEmpty { print("  description: \(text(description))") }
            let short = API.shortIDs(body.scenes.flatMap { scene in [scene.id] + scene.shots.flatMap { [$0.id] + $0.layers.map(\.id) } })
            for scene in body.scenes {
                print("  scene \(scene.number)\(scene.title.map { " \($0)" } ?? "")  [\(short[scene.id] ?? scene.id)]\(marked(scene.conflicts))")
                for shot in scene.shots {
                    let details = [shot.caption, shot.duration.map(seconds)].compactMap { $0 }.joined(separator: ", ")
                    print("    shot \(shot.label)\(details.isEmpty ? "" : "  \(details)")  [\(short[shot.id] ?? shot.id)]\(marked(shot.conflicts))")
                    if !shot.tags.isEmpty { print("      tags: \(shot.tags.joined(separator: ", "))") }
                    if let dialogue = shot.dialogue { print("      dialogue: \(text(dialogue))") }
                    if let action = shot.action { print("      action: \(text(action))") }
                    if let notes = shot.notes, !notes.isEmpty { print("      notes: \(text(notes))") }
                    if let sound = shot.sound {
                        let start = (sound.offset ?? 0) > 0 ? " from \(seconds(sound.offset ?? 0))" : ""
                        print("      sound: \(sound.type), \(seconds(sound.duration ?? 0))\(start)  \(sound.blob.prefix(12))\(mediaState(sound))")
                    }
                    for layer in shot.layers {
                        let hidden = layer.visible ? "" : ", hidden"
                        let locked = layer.locked ? ", locked" : ""
                        let count = layer.strokes.count
                        let content =
                            layer.image.map { "image \($0.width ?? 0)×\($0.height ?? 0) \($0.blob.prefix(12))\(mediaState($0))" }
                            ?? "\(count) stroke\(count == 1 ? "" : "s")"
                        print(
                            "      layer \(text(layer.name)): \(content)\(hidden)\(locked)  [\(short[layer.id] ?? layer.id)]\(marked(layer.conflicts))"
                        )
                    }
                }
            }
            if body.conflicts != nil
                || body.scenes.contains(where: { scene in
                    scene.conflicts != nil || scene.shots.contains { $0.conflicts != nil || $0.layers.contains { $0.conflicts != nil } }
                })
            {
                print("(* a concurrent edit overwrote another value of these fields: `storyteller conflicts` lists both)")
            }
        }

        private func overwritten(_ fields: [String]?) -> String { (fields ?? []).joined(separator: ", ") }

        /// `  * caption overwritten` after an object whose fields have open conflicts.
        private func marked(_ fields: [String]?) -> String {
            guard let fields else { return "" }
            return "  * \(fields.joined(separator: ", ")) overwritten"
        }
    }

    struct Copy: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy a project into a new one owned by this machine; prints its id.",
            discussion: """
                Any project can be copied: one this machine only reads, or one made before signed authorship (which cannot be shared itself).

                Example:
                  storyteller projects copy "Night Train" --name "Night Train (alt ending)"
                """)
        @Argument(help: Help.project) var project: String
        @Option(help: "The copy's name (default: the original's).") var name: String?
        @Option(help: "The library folder for it (default: the root).") var folder: String?
        @OptionGroup var options: ClientOptions

        func run() throws {
            let id = try Names(options).project(project)
            let copy = try options.call(
                API.Project.self, "POST", "/v1/projects/\(segment(id))/copy", body: API.CopyProject(name: name, folder: folder))
            if !options.json { print(copy.id) }
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Rename a project.", discussion: "Example:\n  storyteller projects rename \"Night Train\" \"Night Train II\"")
        @Argument(help: Help.project) var project: String
        @Argument(help: "The new name.") var name: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            let id = try Names(options).project(project)
            _ = try options.call(API.Project.self, "PATCH", "/v1/projects/\(segment(id))", body: API.CreateProject(name: name))
            if !options.json { print("renamed \(project) to \(name)") }
        }
    }

    struct Describe: EditCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set a project's description (an edit: it syncs, and undo takes it back).",
            discussion: "Example:\n  storyteller projects describe \"Night Train\" \"A chase across the night platforms.\"")
        @Argument(help: Help.project) var project: String?
        @Argument(help: "The description.") var description: String?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        mutating func validate() throws { (project, description) = try shiftedForCurrentProject(project, description, "DESCRIPTION") }
        func operations(_ names: Names, in project: String) throws -> [API.EditOperation] {
            [.set(.id(.root), .description, .string(description!))]
        }
        func report(created: [String?], names: Names, in project: String) -> String { "described \(self.project ?? "the project")" }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a project: to the trash on every machine it is shared with (`projects restore` brings it back).",
            discussion: """
                Owners and editors delete a project for everyone it is shared with; anyone of them can restore it. \
                On a machine that may only read the project, it is hidden on this machine only (the others keep it). \
                Projects deleted for everyone are purged after the daemon's trash-retention (30 days by default).

                Example:
                  storyteller projects delete "Night Train"
                """)
        @Argument(help: Help.project) var project: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            let id = try Names(options).project(project)
            let body = try options.call(API.Project.self, "DELETE", "/v1/projects/\(segment(id))")
            guard !options.json else { return }
            if body.trash?.isForEveryone == true {
                print("deleted \(project) for everyone it is shared with (storyteller projects restore brings it back)")
            } else {
                print("hid \(project) on this machine only: this machine may only read it, so it is not deleted for the others")
            }
        }
    }

    struct Restore: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Restore a deleted project, on every machine it is shared with.",
            discussion: "Example:\n  storyteller projects restore \"Night Train\"")
        @Argument(help: "The deleted project: name, id or id prefix (`projects list --deleted`).") var project: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            let names = Names(options)
            let id = try names.project(project, deleted: true)
            let before = try names.projectSummaries(deleted: true).first { $0.id == id }?.trash
            _ = try options.call(API.Project.self, "POST", "/v1/projects/\(segment(id))/restore")
            guard !options.json else { return }
            print(before?.isForEveryone == true ? "restored \(project) for everyone it is shared with" : "restored \(project)")
        }
    }

    struct Purge: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Purge a project in the trash from this machine now, for good (other machines keep their copies).",
            discussion: """
                The daemon purges projects deleted for everyone by itself after its trash-retention; this does it now. \
                A peer that has not received the delete yet would keep the project and could offer it back: \
                the daemon refuses then, unless --force.

                Example:
                  storyteller projects purge "Night Train" --yes
                """)
        @Argument(help: "The project in the trash: name, id or id prefix (`projects list --deleted`).") var project: String
        @Flag(help: "Confirm: the project's data on this machine is removed and cannot be restored from here.") var yes = false
        @Flag(help: "Purge even if a peer it is shared with has not received the delete yet.") var force = false
        @OptionGroup var options: ClientOptions

        func run() throws {
            let id = try Names(options).project(project, deleted: true)
            guard yes else {
                printError("purging removes \(project) from this machine for good; run again with --yes to confirm")
                throw ExitCode(64)
            }
            let result = try options.call(
                API.PurgeResult.self, "POST", "/v1/projects/\(segment(id))/purge" + (force ? "?force=true" : ""))
            guard !options.json else { return }
            print("purged \(project) from this machine")
            if !result.awaiting.isEmpty {
                let names = Names(options)
                let who = result.awaiting.map { names.who($0, local: false, me: nil) }.joined(separator: ", ")
                print("note: \(who) had not received the delete; it keeps the project")
            }
        }
    }
}
