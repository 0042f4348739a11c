import ArgumentParser
import Foundation
import StoryAPI

/// `conflicts`: text fields that two people wrote at once (offline, or
/// before seeing each other's edit). The last writer's value is shown; the
/// other values are kept here, and `keep` brings one back.
struct Conflicts: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Text fields two people wrote at once: the value kept, and the values it overwrote.",
        discussion: """
            Nothing anybody wrote is lost: when two people change the same caption, dialogue, title or \
            other text without having seen each other's edit, everyone sees the last writer's value, \
            `projects show` marks the field, and the other value waits here until it is kept or the \
            field is set again.

            Examples:
              storyteller conflicts "Night Train"
              storyteller conflicts keep "Night Train" 1-2.caption --value 1
            """,
        subcommands: [List.self, Keep.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the fields whose value overwrote another written at the same time.",
            discussion: """
                When two people set the same caption, dialogue, action, notes, title, description or layer name \
                without having seen each other's edit, the last writer's value is shown everywhere and the other is \
                kept here, numbered, with who wrote it and when, until somebody sets the field again (for instance \
                with `conflicts keep`). FIELD is what `conflicts keep` takes: 1-2.caption (a shot), 2.title (a \
                scene), title (the project), 1-2/Ink.name (a layer).

                Examples:
                  storyteller conflicts "Night Train"
                  storyteller conflicts "Night Train" --json
                """)
        @Argument(help: Help.project) var project: String?
        @OptionGroup var options: ClientOptions

        func run() throws {
            let names = Names(options)
            let id = try names.project(project)
            let answer = try options.call(API.Conflicts.self, "GET", "/v1/projects/\(segment(id))/conflicts")
            guard !options.json else { return }
            guard !answer.conflicts.isEmpty else {
                print("no overwritten values: nobody wrote a field at the same time as someone else (or it was settled since)")
                return
            }
            let me = try? names.quietIdentity()
            var rows: [[String]] = []
            for conflict in answer.conflicts {
                for value in [conflict.kept] + conflict.overwritten {
                    rows.append([
                        value.index == nil ? conflict.field : "", value.index.map { "\($0)" } ?? "kept", quoted(value.value),
                        names.who(value.author, local: value.local, me: me), value.time.map { isoTime(milliseconds: $0) } ?? "-",
                    ])
                }
            }
            printTable(["FIELD", "VALUE", "TEXT", "WHO", "WHEN"], rows)
            let first = answer.conflicts[0]
            print(
                "(`storyteller conflicts keep \(project.map(shellWord) ?? "PROJECT") \(first.field) --value 1` makes value 1 of \(first.field) its value)"
            )
        }
    }

    struct Keep: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make an overwritten value of a field its value again (an edit that undo takes back).",
            discussion: """
                FIELD and N are as `storyteller conflicts` lists them. The value is set as a new edit, made having \
                seen every value of the field, so the conflict is settled here and on every machine it syncs to.

                Examples:
                  storyteller conflicts keep "Night Train" 1-2.caption --value 1
                  storyteller conflicts keep 2.title --value 2
                """)
        @Argument(help: Help.project) var project: String?
        @Argument(help: "The field: 1-2.caption (a shot), 2.title (a scene), title (the project), 1-2/Ink.name (a layer).")
        var field: String?
        @Option(help: "Which overwritten value to keep (1 is the first listed).") var value: Int
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        mutating func validate() throws {
            (project, field) = try shiftedForCurrentProject(project, field, "FIELD")
            guard value >= 1 else { throw ValidationError("--value counts from 1, as `storyteller conflicts` numbers the values, not \(value)") }
        }

        func run() throws {
            let id = try Names(options).project(project)
            let request = API.KeepRequest(field: field!, value: value, session: editOptions.session)
            let result = try options.call(API.KeepResult.self, "POST", "/v1/projects/\(segment(id))/conflicts/keep", body: request)
            guard !options.json else { return }
            print("\(result.field) is now \(quoted(result.value)) (was \(quoted(result.replaced)); `storyteller undo` takes it back)")
        }
    }
}

/// A field's text in quotes, or "(cleared)" for no text.
private func quoted(_ value: String?) -> String {
    value.map { "\"\($0)\"" } ?? "(cleared)"
}
