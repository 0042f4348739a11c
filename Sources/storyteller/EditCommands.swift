import ArgumentParser
import Foundation
import StoryAPI
import StoryCore

/// A command that makes one edit: it builds typed operations (the API's own
/// `API.EditOperation`, checked by the same rules as the daemon's), sends
/// them as one request and says what it did. Each command only says which
/// operations and what to print.
protocol EditCommand: ParsableCommand {
    var project: String { get }
    var editOptions: EditOptions { get }
    var options: ClientOptions { get }
    /// The operations of the edit.
    /// - Throws: `APIError` for a value the daemon would refuse, `ValidationError` for missing options.
    func operations() throws -> [API.EditOperation]
    /// What to print (without `--json`), given the ids the operations created.
    func report(created: [String?]) -> String
}

extension EditCommand {
    func run() throws {
        let operations: [API.EditOperation]
        do {
            operations = try self.operations()
        } catch let error as APIError {
            // A value the daemon would refuse, caught before asking it: a usage error.
            printError(UserWords.translate(error.message))
            throw ExitCode(64)
        }
        let request = API.EditRequest(ops: operations, session: editOptions.session)
        let response = try options.raw("POST", "/v1/projects/\(segment(project))/edits", body: try API.encoder.encode(request))
        if options.json { print(String(decoding: response.body, as: UTF8.self)) }
        let result = try? API.decoder.decode(API.EditResult.self, from: response.body)
        if !options.json { print(report(created: result?.created ?? [])) }
    }

    /// An object id argument.
    func reference(_ text: String, _ field: String = "object") throws(APIError) -> API.ObjectReference {
        try API.ObjectReference.parse(text, field: field)
    }
}

/// Options of commands that edit a project.
struct EditOptions: ParsableArguments {
    @Option(help: "Undo session: `undo --session S` undoes only these edits (default: the daemon's default session).")
    var session: String?
}

/// The id the first operation created, or `-`.
private func firstCreated(_ created: [String?]) -> String { (created.first ?? nil) ?? "-" }

struct Scenes: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Scenes of a project.", subcommands: [Add.self, Move.self, Delete.self, SetFields.self])

    struct Add: EditCommand {
        static let configuration = CommandConfiguration(abstract: "Add a scene; prints its id.")
        @Argument var project: String
        @Option(parsing: .unconditional, help: "Position (0 = first; default: last).") var at: Int?
        @Option var title: String?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func operations() throws -> [API.EditOperation] { [.addScene(at: at, title: title)] }
        func report(created: [String?]) -> String { firstCreated(created) }
    }

    struct Move: EditCommand {
        static let configuration = CommandConfiguration(abstract: "Move a scene to another position.")
        @Argument var project: String
        @Argument var scene: String
        @Option(parsing: .unconditional, help: "New position (0 = first).") var to: Int
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func operations() throws -> [API.EditOperation] { [.move(try reference(scene), to: to, in: nil)] }
        func report(created: [String?]) -> String { "moved \(scene)" }
    }

    struct Delete: EditCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a scene (undo brings it back).")
        @Argument var project: String
        @Argument var scene: String
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func operations() throws -> [API.EditOperation] { [.delete(try reference(scene))] }
        func report(created: [String?]) -> String { "deleted \(scene)" }
    }

    struct SetFields: EditCommand {
        static let configuration = CommandConfiguration(commandName: "set", abstract: "Set a scene's title or description.")
        @Argument var project: String
        @Argument var scene: String
        @Option var title: String?
        @Option var description: String?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func operations() throws -> [API.EditOperation] {
            let object = try reference(scene)
            let ops = fieldOperations(on: object, [(.title, title.map(FieldValue.string)), (.description, description.map(FieldValue.string))])
            guard !ops.isEmpty else { throw ValidationError("give --title or --description") }
            return ops
        }
        func report(created: [String?]) -> String { "set \(scene)" }
    }
}

struct Shots: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Shots of a scene.", subcommands: [Add.self, Move.self, Duplicate.self, Delete.self, SetFields.self])

    struct SetFields: EditCommand {
        static let configuration = CommandConfiguration(
            commandName: "set", abstract: "Set a shot's background, caption, notes, duration or frame aspect ratio.")
        @Argument var project: String
        @Argument var shot: String
        @Option(help: "Background colour, #rrggbb.") var background: String?
        @Option var caption: String?
        @Option var notes: String?
        @Option(parsing: .unconditional, help: "Seconds, 0 to 86400.") var duration: Double?
        @Option(name: .customLong("aspect-ratio"), parsing: .unconditional, help: "Frame width / height, above 0 and at most 100, e.g. 1.78.") var aspectRatio: Double?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func operations() throws -> [API.EditOperation] {
            var background: FieldValue?
            if let text = self.background {
                guard let color = Color(hex: text) else { throw APIError(.badRequest, "'background' takes a colour like \"#1e90ff\"") }
                background = .color(color)
            }
            let ops = fieldOperations(
                on: try reference(shot),
                [(.background, background), (.caption, caption.map(FieldValue.string)), (.notes, notes.map(FieldValue.string)),
                 (.duration, duration.map(FieldValue.number)), (.aspectRatio, aspectRatio.map(FieldValue.number))])
            guard !ops.isEmpty else { throw ValidationError("give at least one of --background, --caption, --notes, --duration, --aspect-ratio") }
            return ops
        }
        func report(created: [String?]) -> String { "set \(shot)" }
    }

    struct Add: EditCommand {
        static let configuration = CommandConfiguration(abstract: "Add a shot to a scene; prints its id.")
        @Argument var project: String
        @Argument var scene: String
        @Option(parsing: .unconditional, help: "Position in the scene (default: last).") var at: Int?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func operations() throws -> [API.EditOperation] { [.addShot(scene: try reference(scene, "scene"), at: at)] }
        func report(created: [String?]) -> String { firstCreated(created) }
    }

    struct Move: EditCommand {
        static let configuration = CommandConfiguration(abstract: "Move a shot, within its scene or to another (--scene).")
        @Argument var project: String
        @Argument var shot: String
        @Option(parsing: .unconditional, help: "New position.") var to: Int
        @Option(help: "Target scene (default: the shot's own).") var scene: String?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func operations() throws -> [API.EditOperation] {
            [.move(try reference(shot), to: to, in: try scene.map { (text) throws(APIError) in try reference(text, "in") })]
        }
        func report(created: [String?]) -> String { "moved \(shot)" }
    }

    struct Duplicate: EditCommand {
        static let configuration = CommandConfiguration(abstract: "Duplicate a shot (its strokes are shared, not copied); prints the new id.")
        @Argument var project: String
        @Argument var shot: String
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func operations() throws -> [API.EditOperation] { [.duplicateShot(try reference(shot, "shot"), at: nil)] }
        func report(created: [String?]) -> String { firstCreated(created) }
    }

    struct Delete: EditCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a shot (undo brings it back).")
        @Argument var project: String
        @Argument var shot: String
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func operations() throws -> [API.EditOperation] { [.delete(try reference(shot))] }
        func report(created: [String?]) -> String { "deleted \(shot)" }
    }
}

struct Layers: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Layers of a shot.", subcommands: [Add.self, Move.self, SetFields.self, Delete.self, Group.self, Ungroup.self])

    struct Move: EditCommand {
        static let configuration = CommandConfiguration(abstract: "Move a layer up or down (0 = bottom).")
        @Argument var project: String
        @Argument var layer: String
        @Option(parsing: .unconditional, help: "New position.") var to: Int
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func operations() throws -> [API.EditOperation] { [.move(try reference(layer), to: to, in: nil)] }
        func report(created: [String?]) -> String { "moved \(layer)" }
    }

    struct SetFields: EditCommand {
        static let configuration = CommandConfiguration(commandName: "set", abstract: "Set a layer's name, visibility, lock, opacity or transform.")
        @Argument var project: String
        @Argument var layer: String
        @Option var name: String?
        @Option(help: "true or false.") var visible: Bool?
        @Option(help: "true or false.") var locked: Bool?
        @Option(parsing: .unconditional, help: "0 to 1.") var opacity: Double?
        @Option(help: "Affine transform as JSON [a, b, c, d, tx, ty].") var transform: String?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func operations() throws -> [API.EditOperation] {
            var matrix: FieldValue?
            if let transform {
                guard let values = try? JSONDecoder().decode([Double].self, from: Data(transform.utf8)), values.count == 6 else {
                    throw ValidationError("--transform must be a JSON array of 6 numbers")
                }
                matrix = .transform(Affine(a: values[0], b: values[1], c: values[2], d: values[3], tx: values[4], ty: values[5]))
            }
            let ops = fieldOperations(
                on: try reference(layer),
                [(.name, name.map(FieldValue.string)), (.visible, visible.map(FieldValue.bool)), (.locked, locked.map(FieldValue.bool)),
                 (.opacity, opacity.map(FieldValue.number)), (.transform, matrix)])
            guard !ops.isEmpty else { throw ValidationError("give at least one of --name, --visible, --locked, --opacity, --transform") }
            return ops
        }
        func report(created: [String?]) -> String { "set \(layer)" }
    }

    struct Group: EditCommand {
        static let configuration = CommandConfiguration(abstract: "Group layers; prints the group id.")
        @Argument var project: String
        @Argument(help: "Two or more layer ids.") var layers: [String]
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func operations() throws -> [API.EditOperation] { [.group(try layers.map { try reference($0, "layers") })] }
        func report(created: [String?]) -> String { firstCreated(created) }
    }

    struct Ungroup: EditCommand {
        static let configuration = CommandConfiguration(abstract: "Take layers out of their group.")
        @Argument var project: String
        @Argument var layers: [String]
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func operations() throws -> [API.EditOperation] { [.ungroup(try layers.map { try reference($0, "layers") })] }
        func report(created: [String?]) -> String { "ungrouped \(layers.count) layers" }
    }

    struct Add: EditCommand {
        static let configuration = CommandConfiguration(abstract: "Add a layer to a shot; prints its id.")
        @Argument var project: String
        @Argument var shot: String
        @Option var name: String?
        @Option(parsing: .unconditional, help: "Position (default: top).") var at: Int?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func operations() throws -> [API.EditOperation] { [.addLayer(shot: try reference(shot, "shot"), at: at, name: name)] }
        func report(created: [String?]) -> String { firstCreated(created) }
    }

    struct Delete: EditCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a layer (undo brings it back).")
        @Argument var project: String
        @Argument var layer: String
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func operations() throws -> [API.EditOperation] { [.delete(try reference(layer))] }
        func report(created: [String?]) -> String { "deleted \(layer)" }
    }
}

/// The brush options of the stroke commands.
struct BrushOptions: ParsableArguments {
    @Option(help: "pen, marker, pencil, eraser, brush or highlighter.") var tool: String?
    @Option(help: "Colour, #rrggbb or #rrggbbaa.") var color: String?
    @Option(parsing: .unconditional, help: "Width as a fraction of the frame width, 0 to 1.") var width: Double?
    @Option(help: "Line ends: round, butt or square.") var cap: String?
    @Option(help: "Corners: round, miter or bevel.") var join: String?

    /// The fields given, or nil when none is.
    func patch() throws(APIError) -> API.BrushPatch? {
        let patch = try API.BrushPatch(tool: tool, color: color, width: width, cap: cap, join: join)
        return patch.isEmpty ? nil : patch
    }
}

struct Strokes: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Pen strokes of a layer.", subcommands: [Add.self, Erase.self, Replace.self])

    struct Add: EditCommand {
        static let configuration = CommandConfiguration(abstract: "Add a stroke; prints its id.")
        @Argument var project: String
        @Argument var layer: String
        @Option(help: "Points as a flat JSON array [x, y, pressure, …], x and y in the unit square.") var points: String?
        @Option(help: "Read the points array from a file instead.") var file: String?
        @OptionGroup var brush: BrushOptions
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func operations() throws -> [API.EditOperation] {
            let json: Data
            switch (points, file) {
            case (let text?, nil): json = Data(text.utf8)
            case (nil, let path?): json = try Data(contentsOf: URL(fileURLWithPath: path))
            default: throw ValidationError("give the points with --points JSON or --file FILE")
            }
            guard let flat = try? JSONDecoder().decode([Double].self, from: json) else {
                throw ValidationError("the points must be a JSON array of numbers")
            }
            var stroke = Brush()
            try brush.patch()?.apply(to: &stroke)
            return [.addStroke(layer: try reference(layer, "layer"), brush: stroke, points: try API.EditOperation.points(flat: flat))]
        }
        func report(created: [String?]) -> String { firstCreated(created) }
    }

    struct Erase: EditCommand {
        static let configuration = CommandConfiguration(abstract: "Erase a stroke (undo brings it back).")
        @Argument var project: String
        @Argument var layer: String
        @Argument var stroke: String
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func operations() throws -> [API.EditOperation] { [.eraseStroke(layer: try reference(layer, "layer"), stroke: try reference(stroke, "stroke"))] }
        func report(created: [String?]) -> String { "erased \(stroke)" }
    }

    struct Replace: EditCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace a stroke's value: restyle it, move/scale it, or bring it back after an erase.")
        @Argument var project: String
        @Argument var layer: String
        @Argument var stroke: String
        @OptionGroup var brush: BrushOptions
        @Option(parsing: .unconditional, help: "Move by DX,DY (fractions of the frame), e.g. -0.1,0.05.") var translate: String?
        @Option(parsing: .unconditional, help: "Scale by this factor (about the frame's origin).") var scale: Double?
        @Flag(help: "Bring the stroke back if it was erased.") var restore = false
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func operations() throws -> [API.EditOperation] {
            var transform: Affine?
            if translate != nil || scale != nil {
                var (dx, dy) = (0.0, 0.0)
                if let translate {
                    let parts = translate.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
                    guard parts.count == 2 else { throw ValidationError("--translate takes DX,DY, like 0.1,-0.05") }
                    (dx, dy) = (parts[0], parts[1])
                }
                let factor = scale ?? 1
                transform = Affine(a: factor, b: 0, c: 0, d: factor, tx: dx, ty: dy)
            }
            let patch = try brush.patch()
            guard restore || patch != nil || transform != nil else {
                throw ValidationError("give what to change: --tool, --color, --width, --cap, --join, --translate, --scale or --restore")
            }
            return [.replaceStroke(
                layer: try reference(layer, "layer"), stroke: try reference(stroke, "stroke"), restore: restore, brush: patch, transform: transform)]
        }
        func report(created: [String?]) -> String { "replaced \(stroke)" }
    }
}

/// `set` operations for the fields given (nil values are left out).
private func fieldOperations(on object: API.ObjectReference, _ fields: [(FieldKey, FieldValue?)]) -> [API.EditOperation] {
    fields.compactMap { key, value in value.map { .set(object, key, $0) } }
}

/// `undo` and `redo`: take back (or reapply) the last edit of a session.
struct Undo: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Undo the last edit of a session in a project.")
    @Argument var project: String
    @OptionGroup var editOptions: EditOptions
    @OptionGroup var options: ClientOptions

    func run() throws {
        let result = try undoOrRedo("undo", project: project, editOptions: editOptions, options: options)
        if !options.json { print(result.undone == true ? "undone" : "nothing to undo") }
    }
}

struct Redo: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Redo the last undone edit of a session.")
    @Argument var project: String
    @OptionGroup var editOptions: EditOptions
    @OptionGroup var options: ClientOptions

    func run() throws {
        let result = try undoOrRedo("redo", project: project, editOptions: editOptions, options: options)
        if !options.json { print(result.redone == true ? "redone" : "nothing to redo") }
    }
}

private func undoOrRedo(_ action: String, project: String, editOptions: EditOptions, options: ClientOptions) throws -> API.UndoResult {
    let body = try API.encoder.encode(API.UndoRequest(session: editOptions.session))
    let response = try options.raw("POST", "/v1/projects/\(segment(project))/\(action)", body: body)
    if options.json { print(String(decoding: response.body, as: UTF8.self)) }
    return (try? API.decoder.decode(API.UndoResult.self, from: response.body)) ?? API.UndoResult(undone: false)
}
