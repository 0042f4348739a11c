import ArgumentParser
import Foundation
import StoryAPI
import StoryClient
import StoryCore

/// A command that makes one edit: it builds typed operations (the API's own
/// `API.EditOperation`, checked by the same rules as the daemon's), sends
/// them as one request and says what it did. Each command only says which
/// operations and what to print; names (`1-2`, `ink`, a prefix) are turned
/// into ids by `Names` first.
protocol EditCommand: ParsableCommand {
    /// The project as given (nil: the current one).
    var project: String? { get }
    var editOptions: EditOptions { get }
    var options: ClientOptions { get }
    /// The operations of the edit.
    /// - Throws: `APIError` for a value the daemon would refuse, `ValidationError` for missing options.
    func operations(_ names: Names, in project: String) throws -> [API.EditOperation]
    /// What to print (without `--json`), given what the operations created.
    func report(created: [String?], names: Names, in project: String) throws -> String
    /// The command's own words for a refusal of the daemon (its error code
    /// and message), or nil to print the daemon's.
    func reworded(code: String, message: String) -> String?
    /// What the word in the project's place was likely meant as, said when a
    /// current project is chosen and it names no project; nil for nothing.
    var projectWordHint: String? { get }
}

extension EditCommand {
    func run() throws {
        let names = Names(options)
        let project = try names.project(self.project, otherwise: projectWordHint)
        let operations: [API.EditOperation]
        do {
            operations = try self.operations(names, in: project)
        } catch let error as APIError {
            // A value the daemon would refuse, caught before asking it: a usage error.
            printError(UserWords.say(error))
            throw ExitCode(64)
        }
        let request = API.EditRequest(ops: operations, session: editOptions.session)
        let response = try options.raw(
            "POST", "/v1/projects/\(segment(project))/edits", body: try API.encoder.encode(request), reword: reworded(code:message:))
        if options.json { print(String(decoding: response.body, as: UTF8.self)) }
        let result = try? API.decoder.decode(API.EditResult.self, from: response.body)
        if !options.json { print(try report(created: result?.created ?? [], names: names, in: project)) }
    }
}

extension EditCommand {
    func reworded(code: String, message: String) -> String? { nil }
    var projectWordHint: String? { nil }
}

/// A stroke edit refused because the layer is locked, with the command that
/// unlocks it: "layer ink in shot 1-2 is locked; unlock it with storyteller
/// layers set "Night Train" 1-2/ink --locked false".
func lockedLayerAdvice(code: String, message: String, project: String?, layer: String?) -> String? {
    guard code == APIError.Code.layerLocked.rawValue else { return nil }
    let what = message.split(separator: ";", maxSplits: 1).first.map(String.init) ?? message
    let arguments = [project, layer].compactMap { $0 }.map(shellWord).joined(separator: " ")
    return "\(what); unlock it with storyteller layers set \(arguments) --locked false"
}

/// A word as a shell reads it back: quoted when it holds anything but
/// letters, digits and `-_./@:+`.
func shellWord(_ text: String) -> String {
    let plain = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_./@:+"))
    guard !text.isEmpty, text.unicodeScalars.allSatisfy(plain.contains) else {
        return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
    return text
}

/// What an `add` command prints: the new id alone when the output is read by
/// a program (`id=$(storyteller shots add …)`), "added shot 1-3  [id]" at a terminal.
func reportCreated(_ created: [String?], names: Names, in project: String) -> String {
    guard let id = created.first ?? nil else { return "-" }
    guard isatty(STDOUT_FILENO) == 1 else { return id }
    return "added \(names.describe(id, in: project))  [\(id)]"
}

/// Options of commands that edit a project.
struct EditOptions: ParsableArguments {
    @Option(help: "Undo session: `undo --session S` undoes only these edits (default: the daemon's default session).")
    var session: String?
}

/// Help texts of the arguments that name things.
enum Help {
    static let project = ArgumentHelp(
        "The project: name, library path (Films/Night Train), id or id prefix; may be left out after `storyteller use PROJECT`.",
        valueName: "project")
    static let scene = ArgumentHelp("The scene: its number (2), title, or id prefix.", valueName: "scene")
    static let shot = ArgumentHelp("The shot: its label (1-2 or 1B) or id prefix.", valueName: "shot")
    static let layer = ArgumentHelp("The layer: its name (in its shot), SHOT/NAME like 1-2/ink, or id prefix.", valueName: "layer")
    static let node = ArgumentHelp(
        "A folder or project entry: its path of names from the root (Films/Shorts), its id, root or incoming.", valueName: "node")
    static let peer = ArgumentHelp("The peer: its name, id or id prefix (as `storyteller peers` shows).", valueName: "peer")
    static let stroke = ArgumentHelp("The stroke: its number in the layer (as `strokes list` shows) or id prefix.", valueName: "stroke")
}

/// Positional arguments after a PROJECT that may be left out: when one
/// fewer is given, they move one place right and PROJECT is the current one.
func shiftedForCurrentProject(_ project: String?, _ first: String?, _ firstName: String) throws -> (String?, String?) {
    let (project, first) = shiftedForCurrentProject(project, first)
    guard first != nil else { throw ValidationError("give the \(firstName)") }
    return (project, first)
}

/// The same shift, for an argument that may be left out too.
func shiftedForCurrentProject(_ project: String?, _ first: String?) -> (String?, String?) {
    first == nil ? (nil, project) : (project, first)
}

func shiftedForCurrentProject(
    _ project: String?, _ first: String?, _ second: String?, _ names: (String, String)
) throws -> (String?, String?, String?) {
    let (project, first, second) = second == nil ? (nil, project, first) : (project, first, second)
    guard first != nil, second != nil else { throw ValidationError("give the \(names.0) and the \(names.1)") }
    return (project, first, second)
}

struct Scenes: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Scenes of a project.", subcommands: [List.self, Add.self, Move.self, Delete.self, SetFields.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A project's scenes: number, title, shots, running time.",
            discussion: "Example:\n  storyteller scenes list \"Night Train\"")
        @Argument(help: Help.project) var project: String?
        @OptionGroup var options: ClientOptions

        func run() throws {
            let names = Names(options)
            let id = try names.project(project)
            let body = try options.call(API.Project.self, "GET", "/v1/projects/\(segment(id))?points=false")
            guard !options.json else { return }
            let short = API.shortIDs(body.scenes.map(\.id))
            printTable(
                ["SCENE", "TITLE", "SHOTS", "TIME", "ID"],
                body.scenes.map { scene in
                    ["\(scene.number)", scene.title ?? "", "\(scene.shots.count)", runningTime(scene.shots), short[scene.id] ?? scene.id]
                })
        }
    }

    struct Add: EditCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a scene; prints its id.",
            discussion: "Example:\n  storyteller scenes add \"Night Train\" --title \"Platform 9\"")
        @Argument(help: Help.project) var project: String?
        @Option(parsing: .unconditional, help: "Position (0 = first; default: last).") var at: Int?
        @Option(help: "The scene's title.") var title: String?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        var projectWordHint: String? {
            guard let project, title == nil else { return nil }
            return "a new scene's title goes in --title: storyteller scenes add --title \"\(project)\""
        }
        func operations(_ names: Names, in project: String) throws -> [API.EditOperation] { [.addScene(at: at, title: title)] }
        func report(created: [String?], names: Names, in project: String) -> String { reportCreated(created, names: names, in: project) }
    }

    struct Move: EditCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move a scene to another position.", discussion: "Example:\n  storyteller scenes move \"Night Train\" 3 --to 0")
        @Argument(help: Help.project) var project: String?
        @Argument(help: Help.scene) var scene: String?
        @Option(parsing: .unconditional, help: "New position (0 = first).") var to: Int
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        mutating func validate() throws { (project, scene) = try shiftedForCurrentProject(project, scene, "SCENE") }
        func operations(_ names: Names, in project: String) throws -> [API.EditOperation] {
            [.move(try names.scene(scene!, in: project), to: to, in: nil)]
        }
        func report(created: [String?], names: Names, in project: String) -> String { "moved scene \(scene!) to position \(to)" }
    }

    struct Delete: EditCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a scene (undo brings it back).", discussion: "Example:\n  storyteller scenes delete \"Night Train\" 2")
        @Argument(help: Help.project) var project: String?
        @Argument(help: Help.scene) var scene: String?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        mutating func validate() throws { (project, scene) = try shiftedForCurrentProject(project, scene, "SCENE") }
        func operations(_ names: Names, in project: String) throws -> [API.EditOperation] { [.delete(try names.scene(scene!, in: project))] }
        func report(created: [String?], names: Names, in project: String) -> String { "deleted scene \(scene!)" }
    }

    struct SetFields: EditCommand {
        static let configuration = CommandConfiguration(
            commandName: "set", abstract: "Set a scene's title or description.",
            discussion: "Example:\n  storyteller scenes set \"Night Train\" 1 --title \"Platform 9\"")
        @Argument(help: Help.project) var project: String?
        @Argument(help: Help.scene) var scene: String?
        @Option(help: "The scene's title.") var title: String?
        @Option(help: "What happens in it.") var description: String?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        mutating func validate() throws { (project, scene) = try shiftedForCurrentProject(project, scene, "SCENE") }
        func operations(_ names: Names, in project: String) throws -> [API.EditOperation] {
            let object = try names.scene(scene!, in: project)
            let ops = fieldOperations(on: object, [(.title, title.map(FieldValue.string)), (.description, description.map(FieldValue.string))])
            guard !ops.isEmpty else { throw ValidationError("give --title or --description") }
            return ops
        }
        func report(created: [String?], names: Names, in project: String) -> String { "set scene \(scene!)" }
    }
}

extension Projects {
    struct SetFields: EditCommand {
        static let configuration = CommandConfiguration(
            commandName: "set", abstract: "Set a project's title, frame aspect ratio or onion-skin colours (an edit: it syncs).",
            discussion: """
                Onion skins (`render --onion N`) tint the shots before the drawn one red and those after it green \
                unless the project chooses its own colours; `default` goes back to red and green.

                Examples:
                  storyteller projects set "Night Train" --aspect-ratio 2.39
                  storyteller projects set "Night Train" --onion-before "#1e90ff" --onion-after "#ff8c00"
                """)
        @Argument(help: Help.project) var project: String?
        @Option(help: "The title printed on sheets.") var title: String?
        @Option(
            name: .customLong("aspect-ratio"), parsing: .unconditional, help: "Frame width / height of the shots, above 0 and at most 100, e.g. 1.78."
        )
        var aspectRatio: Double?
        @Option(name: .customLong("onion-before"), help: "Onion-skin tint of the shots before, #rrggbb (or 'default': red).")
        var onionBefore: String?
        @Option(name: .customLong("onion-after"), help: "Onion-skin tint of the shots after, #rrggbb (or 'default': green).")
        var onionAfter: String?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func operations(_ names: Names, in project: String) throws -> [API.EditOperation] {
            func colour(_ text: String?, _ option: String) throws -> FieldValue? {
                guard let text else { return nil }
                if text.lowercased() == "default" { return .null }
                guard let color = Color(hex: text) else {
                    throw ValidationError("--\(option) takes a colour like \"#1e90ff\" or 'default', not '\(text)'")
                }
                return .color(color)
            }
            let ops = fieldOperations(
                on: .id(.root),
                [
                    (.title, title.map(FieldValue.string)), (.aspectRatio, aspectRatio.map(FieldValue.number)),
                    (.onionBefore, try colour(onionBefore, "onion-before")), (.onionAfter, try colour(onionAfter, "onion-after")),
                ])
            guard !ops.isEmpty else { throw ValidationError("give at least one of --title, --aspect-ratio, --onion-before, --onion-after") }
            return ops
        }
        func report(created: [String?], names: Names, in project: String) -> String { "set \(self.project ?? "the project")" }
    }
}

/// The shot fields `shots add` and `shots set` take.
struct ShotFields: ParsableArguments {
    @Option(help: "Background colour, #rrggbb.") var background: String?
    @Option(help: "The caption under the panel.") var caption: String?
    @Option(help: "Notes for the crew.") var notes: String?
    @Option(help: "The line spoken in the shot.") var dialogue: String?
    @Option(help: "What happens in the shot (the action line of a sheet).") var action: String?
    @Option(parsing: .unconditional, help: "How long the shot runs in the animatic: seconds, 0 to 86400.") var duration: Double?
    @Option(name: .customLong("aspect-ratio"), parsing: .unconditional, help: "Frame width / height, above 0 and at most 100, e.g. 1.78.")
    var aspectRatio: Double?

    /// `set` operations for the fields given.
    func operations(on object: API.ObjectReference) throws -> [API.EditOperation] {
        var background: FieldValue?
        if let text = self.background {
            guard let color = Color(hex: text) else { throw APIError(.badRequest, "'background' takes a colour like \"#1e90ff\"") }
            background = .color(color)
        }
        return fieldOperations(
            on: object,
            [
                (.background, background), (.caption, caption.map(FieldValue.string)), (.notes, notes.map(FieldValue.string)),
                (.dialogue, dialogue.map(FieldValue.string)), (.action, action.map(FieldValue.string)), (.duration, duration.map(FieldValue.number)),
                (.aspectRatio, aspectRatio.map(FieldValue.number)),
            ])
    }
}

struct Shots: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Shots of a scene.", subcommands: [List.self, Add.self, Move.self, Duplicate.self, Delete.self, SetFields.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A project's shots (or one scene's): label, caption, duration, layers, strokes.",
            discussion: "Examples:\n  storyteller shots list \"Night Train\"\n  storyteller shots list --scene 2")
        @Argument(help: Help.project) var project: String?
        @Option(help: "Only this scene: number, title or id prefix.") var scene: String?
        @OptionGroup var options: ClientOptions

        func run() throws {
            let names = Names(options)
            let id = try names.project(project)
            let body = try names.structure(of: id)
            var scenes = body.scenes
            if let scene {
                let chosen = try names.scene(scene, in: id).description
                scenes = scenes.filter { $0.id == chosen }
            }
            if options.json {
                print(String(decoding: try API.encoder.encode(scenes.flatMap(\.shots)), as: UTF8.self))
                return
            }
            let short = API.shortIDs(body.scenes.flatMap { $0.shots.map(\.id) })
            // A TAGS column when some shot has tags (`storyteller tags add PROJECT SHOT TAG`).
            let showsTags = scenes.contains { $0.shots.contains { !$0.tags.isEmpty } }
            printTable(
                ["SHOT", "CAPTION", "DURATION", "LAYERS", "STROKES"] + (showsTags ? ["TAGS"] : []) + ["ID"],
                scenes.flatMap(\.shots).map { shot in
                    [
                        shot.label, shot.caption ?? "", shot.duration.map { seconds($0) } ?? "", "\(shot.layers.count)",
                        "\(shot.layers.reduce(0) { $0 + $1.strokes.count })",
                    ] + (showsTags ? [shot.tags.joined(separator: ", ")] : [])
                        + [short[shot.id] ?? shot.id]
                })
        }
    }

    struct SetFields: EditCommand {
        static let configuration = CommandConfiguration(
            commandName: "set", abstract: "Set a shot's background, caption, notes, dialogue, action, duration or frame aspect ratio.",
            discussion: "Example:\n  storyteller shots set \"Night Train\" 1-2 --caption \"She runs\" --duration 2.5")
        @Argument(help: Help.project) var project: String?
        @Argument(help: Help.shot) var shot: String?
        @OptionGroup var fields: ShotFields
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        mutating func validate() throws { (project, shot) = try shiftedForCurrentProject(project, shot, "SHOT") }
        func operations(_ names: Names, in project: String) throws -> [API.EditOperation] {
            let ops = try fields.operations(on: try names.shot(shot!, in: project))
            guard !ops.isEmpty else {
                throw ValidationError("give at least one of --background, --caption, --notes, --dialogue, --action, --duration, --aspect-ratio")
            }
            return ops
        }
        func report(created: [String?], names: Names, in project: String) -> String { "set shot \(shot!)" }
    }

    struct Add: EditCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a shot to a scene (with the fields `shots set` takes); prints its id.",
            discussion: "Example:\n  storyteller shots add \"Night Train\" 1 --caption \"Wide: the platform\" --duration 3")
        @Argument(help: Help.project) var project: String?
        @Argument(help: "The scene: its number (2), title, or id prefix; may be left out when the project has one.")
        var scene: String?
        @Option(parsing: .unconditional, help: "Position in the scene (0 = first; default: last).") var at: Int?
        @OptionGroup var fields: ShotFields
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        // Without a SCENE, the project's only scene (`Names.onlyScene`).
        mutating func validate() throws { (project, scene) = shiftedForCurrentProject(project, scene) }
        func operations(_ names: Names, in project: String) throws -> [API.EditOperation] {
            let scene = try scene.map { try names.scene($0, in: project) } ?? names.onlyScene(in: project)
            return [.addShot(scene: scene, at: at)] + (try fields.operations(on: .created(0)))
        }
        func report(created: [String?], names: Names, in project: String) -> String { reportCreated(created, names: names, in: project) }
    }

    struct Move: EditCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move a shot, within its scene or to another (--scene).",
            discussion: "Example:\n  storyteller shots move \"Night Train\" 1-3 --to 0 --scene 2")
        @Argument(help: Help.project) var project: String?
        @Argument(help: Help.shot) var shot: String?
        @Option(parsing: .unconditional, help: "New position (0 = first).") var to: Int
        @Option(help: "Target scene: number, title or id prefix (default: the shot's own).") var scene: String?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        mutating func validate() throws { (project, shot) = try shiftedForCurrentProject(project, shot, "SHOT") }
        func operations(_ names: Names, in project: String) throws -> [API.EditOperation] {
            [.move(try names.shot(shot!, in: project), to: to, in: try scene.map { try names.scene($0, in: project) })]
        }
        func report(created: [String?], names: Names, in project: String) -> String {
            "moved shot \(shot!) to position \(to)" + (scene.map { " of scene \($0)" } ?? "")
        }
    }

    struct Duplicate: EditCommand {
        static let configuration = CommandConfiguration(
            abstract: "Duplicate a shot (its strokes are shared, not copied); prints the new id.",
            discussion: "Example:\n  storyteller shots duplicate \"Night Train\" 1-2")
        @Argument(help: Help.project) var project: String?
        @Argument(help: Help.shot) var shot: String?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        mutating func validate() throws { (project, shot) = try shiftedForCurrentProject(project, shot, "SHOT") }
        func operations(_ names: Names, in project: String) throws -> [API.EditOperation] {
            [.duplicateShot(try names.shot(shot!, in: project), at: nil)]
        }
        func report(created: [String?], names: Names, in project: String) -> String { reportCreated(created, names: names, in: project) }
    }

    struct Delete: EditCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a shot (undo brings it back).", discussion: "Example:\n  storyteller shots delete \"Night Train\" 1-2")
        @Argument(help: Help.project) var project: String?
        @Argument(help: Help.shot) var shot: String?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        mutating func validate() throws { (project, shot) = try shiftedForCurrentProject(project, shot, "SHOT") }
        func operations(_ names: Names, in project: String) throws -> [API.EditOperation] { [.delete(try names.shot(shot!, in: project))] }
        func report(created: [String?], names: Names, in project: String) -> String { "deleted shot \(shot!)" }
    }
}

/// `set` operations for the fields given (nil values are left out).
func fieldOperations(on object: API.ObjectReference, _ fields: [(FieldKey, FieldValue?)]) -> [API.EditOperation] {
    fields.compactMap { key, value in value.map { .set(object, key, $0) } }
}

/// `2.5 s`.
func seconds(_ value: Double) -> String {
    String(format: "%g s", value)
}

/// The running time of shots (those without a duration count 2 s, as the animatic holds them).
func runningTime(_ shots: [API.Shot]) -> String {
    let total = shots.reduce(0.0) { $0 + ($1.duration ?? 2) }
    let whole = Int(total.rounded())
    return whole >= 60 ? "\(whole / 60):" + String(format: "%02d", whole % 60) : seconds(total)
}
