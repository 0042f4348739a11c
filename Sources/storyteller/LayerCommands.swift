import ArgumentParser
import Foundation
import StoryAPI
import StoryCore

struct Layers: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Layers of a shot.", subcommands: [List.self, Add.self, Move.self, SetFields.self, Delete.self, Group.self, Ungroup.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A shot's layers, bottom first: name, strokes, visibility, lock, opacity.",
            discussion: "Example:\n  storyteller layers list \"Night Train\" 1-2")
        @Argument(help: Help.project) var project: String?
        @Argument(help: Help.shot) var shot: String?
        @OptionGroup var options: ClientOptions

        mutating func validate() throws { (project, shot) = try shiftedForCurrentProject(project, shot, "SHOT") }

        func run() throws {
            let names = Names(options)
            let id = try names.project(project)
            guard let found = try names.shotDetail(try names.shot(shot!, in: id), in: id) else {
                printError("no shot '\(shot!)'")
                throw ExitCode(1)
            }
            if options.json {
                print(String(decoding: try API.encoder.encode(found.layers), as: UTF8.self))
                return
            }
            let short = API.shortIDs(found.layers.map(\.id))
            printTable(
                ["#", "NAME", "CONTENT", "VISIBLE", "LOCKED", "OPACITY", "ID"],
                found.layers.enumerated().map { index, layer in
                    let content =
                        layer.image.map { "image \($0.width ?? 0)×\($0.height ?? 0) \($0.blob.prefix(8))" }
                        ?? "\(layer.strokes.count) stroke\(layer.strokes.count == 1 ? "" : "s")"
                    return [
                        "\(index)", layer.name ?? "", content, layer.visible ? "yes" : "no", layer.locked ? "yes" : "no",
                        String(format: "%g", layer.opacity), short[layer.id] ?? layer.id,
                    ]
                })
        }
    }

    struct Move: EditCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move a layer up or down (0 = bottom).", discussion: "Example:\n  storyteller layers move \"Night Train\" 1-2/ink --to 0")
        @Argument(help: Help.project) var project: String?
        @Argument(help: Help.layer) var layer: String?
        @Option(parsing: .unconditional, help: "New position (0 = bottom).") var to: Int
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        mutating func validate() throws { (project, layer) = try shiftedForCurrentProject(project, layer, "LAYER") }
        func operations(_ names: Names, in project: String) throws -> [API.EditOperation] {
            [.move(try names.layer(layer!, in: project), to: to, in: nil)]
        }
        func report(created: [String?], names: Names, in project: String) -> String { "moved layer \(layer!) to position \(to)" }
    }

    struct SetFields: EditCommand {
        static let configuration = CommandConfiguration(
            commandName: "set", abstract: "Set a layer's name, visibility, lock, opacity or transform.",
            discussion: "Example:\n  storyteller layers set \"Night Train\" 1-2/ink --opacity 0.5 --visible false")
        @Argument(help: Help.project) var project: String?
        @Argument(help: Help.layer) var layer: String?
        @Option(help: "The layer's name.") var name: String?
        @Option(help: "Shown: true or false.") var visible: Bool?
        @Option(help: "Locked against drawing: true or false.") var locked: Bool?
        @Option(parsing: .unconditional, help: "0 (transparent) to 1.") var opacity: Double?
        @Option(help: "Affine transform as JSON [a, b, c, d, tx, ty].") var transform: String?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        mutating func validate() throws { (project, layer) = try shiftedForCurrentProject(project, layer, "LAYER") }
        func operations(_ names: Names, in project: String) throws -> [API.EditOperation] {
            var matrix: FieldValue?
            if let transform {
                guard let values = try? JSONDecoder().decode([Double].self, from: Data(transform.utf8)), values.count == 6 else {
                    throw ValidationError("--transform must be a JSON array of 6 numbers")
                }
                matrix = .transform(Affine(a: values[0], b: values[1], c: values[2], d: values[3], tx: values[4], ty: values[5]))
            }
            let ops = fieldOperations(
                on: try names.layer(layer!, in: project),
                [
                    (.name, name.map(FieldValue.string)), (.visible, visible.map(FieldValue.bool)), (.locked, locked.map(FieldValue.bool)),
                    (.opacity, opacity.map(FieldValue.number)), (.transform, matrix),
                ])
            guard !ops.isEmpty else { throw ValidationError("give at least one of --name, --visible, --locked, --opacity, --transform") }
            return ops
        }
        func report(created: [String?], names: Names, in project: String) -> String { "set layer \(layer!)" }
    }

    struct Group: EditCommand {
        static let configuration = CommandConfiguration(
            abstract: "Group layers; prints the group id.", discussion: "Example:\n  storyteller layers group \"Night Train\" 1-2/ink 1-2/colour")
        @Argument(help: Help.project) var project: String?
        @Argument(help: "Two or more layers: names, SHOT/NAME, or id prefixes.") var layers: [String] = []
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        mutating func validate() throws { (project, layers) = try projectOrFirstLayer(project, layers) }
        func operations(_ names: Names, in project: String) throws -> [API.EditOperation] {
            [.group(try layers.map { try names.layer($0, in: project) })]
        }
        func report(created: [String?], names: Names, in project: String) -> String {
            isatty(STDOUT_FILENO) == 1 ? "grouped \(layers.count) layers  [\((created.first ?? nil) ?? "-")]" : (created.first ?? nil) ?? "-"
        }
    }

    struct Ungroup: EditCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take layers out of their group.", discussion: "Example:\n  storyteller layers ungroup \"Night Train\" 1-2/ink")
        @Argument(help: Help.project) var project: String?
        @Argument(help: "The layers: names, SHOT/NAME, or id prefixes.") var layers: [String] = []
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        mutating func validate() throws { (project, layers) = try projectOrFirstLayer(project, layers) }
        func operations(_ names: Names, in project: String) throws -> [API.EditOperation] {
            [.ungroup(try layers.map { try names.layer($0, in: project) })]
        }
        func report(created: [String?], names: Names, in project: String) -> String { "ungrouped \(layers.count) layers" }
    }

    struct Add: EditCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a layer to a shot; prints its id.", discussion: "Example:\n  storyteller layers add \"Night Train\" 1-2 --name ink")
        @Argument(help: Help.project) var project: String?
        @Argument(help: ArgumentHelp("The shot: its label (1-2 or 1B) or id prefix; may be left out when the project has one.", valueName: "shot"))
        var shot: String?
        @Option(help: "The layer's name (how commands name it: 1-2/ink).") var name: String?
        @Option(parsing: .unconditional, help: "Position (0 = bottom; default: top).") var at: Int?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        // Without a SHOT, the project's only shot (`Names.onlyShot`).
        mutating func validate() throws { (project, shot) = shiftedForCurrentProject(project, shot) }
        func operations(_ names: Names, in project: String) throws -> [API.EditOperation] {
            [.addLayer(shot: try shot.map { try names.shot($0, in: project) } ?? names.onlyShot(in: project), at: at, name: name)]
        }
        func report(created: [String?], names: Names, in project: String) -> String { reportCreated(created, names: names, in: project) }
    }

    struct Delete: EditCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a layer (undo brings it back).", discussion: "Example:\n  storyteller layers delete \"Night Train\" 1-2/ink")
        @Argument(help: Help.project) var project: String?
        @Argument(help: Help.layer) var layer: String?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        mutating func validate() throws { (project, layer) = try shiftedForCurrentProject(project, layer, "LAYER") }
        func operations(_ names: Names, in project: String) throws -> [API.EditOperation] { [.delete(try names.layer(layer!, in: project))] }
        func report(created: [String?], names: Names, in project: String) -> String { "deleted layer \(layer!)" }
    }
}

/// `layers group [PROJECT] LAYER…`: one word alone is a layer of the current
/// project; with more, the first is the project.
func projectOrFirstLayer(_ project: String?, _ layers: [String]) throws -> (String?, [String]) {
    let (project, layers) = layers.isEmpty && project != nil ? (nil, [project!]) : (project, layers)
    guard !layers.isEmpty else { throw ValidationError("give the layers") }
    return (project, layers)
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
    static let configuration = CommandConfiguration(
        abstract: "Pen strokes of a layer.", subcommands: [List.self, Add.self, Erase.self, Replace.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A layer's strokes in drawing order: number, tool, colour, width, points.",
            discussion: "Example:\n  storyteller strokes list \"Night Train\" 1-2/ink")
        @Argument(help: Help.project) var project: String?
        @Argument(help: Help.layer) var layer: String?
        @OptionGroup var options: ClientOptions

        mutating func validate() throws { (project, layer) = try shiftedForCurrentProject(project, layer, "LAYER") }

        func run() throws {
            let names = Names(options)
            let id = try names.project(project)
            let layerID = try names.layer(layer!, in: id).description
            // With points: how many each stroke has.
            let body = try names.structure(of: id, withPoints: true)
            guard let found = body.scenes.lazy.flatMap(\.shots).flatMap(\.layers).first(where: { $0.id == layerID }) else {
                printError("no layer '\(layer!)'")
                throw ExitCode(1)
            }
            if options.json {
                print(String(decoding: try API.encoder.encode(found.strokes), as: UTF8.self))
                return
            }
            let short = API.shortIDs(found.strokes.map(\.id))
            printTable(
                ["#", "TOOL", "COLOUR", "WIDTH", "POINTS", "ID"],
                found.strokes.enumerated().map { index, stroke in
                    [
                        "\(index + 1)", stroke.brush.tool, stroke.brush.color, String(format: "%g", stroke.brush.width), "\(stroke.points.count / 3)",
                        short[stroke.id] ?? stroke.id,
                    ]
                })
        }
    }

    struct Add: EditCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a stroke; prints its id.",
            discussion: """
                Example:
                  storyteller strokes add "Night Train" 1-2/ink --points '[0.1,0.2,0.5, 0.4,0.6,0.8]' --tool marker --color '#ff0000'
                """)
        @Argument(help: Help.project) var project: String?
        @Argument(help: Help.layer) var layer: String?
        @Option(help: "Points as a flat JSON array [x, y, pressure, …], x and y in the unit square (0 to 1), pressure 0 to 1.")
        var points: String?
        @Option(help: "Read the points array from a file instead.") var file: String?
        @OptionGroup var brush: BrushOptions
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        mutating func validate() throws { (project, layer) = try shiftedForCurrentProject(project, layer, "LAYER") }
        func operations(_ names: Names, in project: String) throws -> [API.EditOperation] {
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
            return [.addStroke(layer: try names.layer(layer!, in: project), brush: stroke, points: try API.EditOperation.points(flat: flat))]
        }
        func report(created: [String?], names: Names, in project: String) -> String { reportCreated(created, names: names, in: project) }
        func reworded(code: String, message: String) -> String? {
            lockedLayerAdvice(code: code, message: message, project: project, layer: layer)
        }
    }

    struct Erase: EditCommand {
        static let configuration = CommandConfiguration(
            abstract: "Erase a stroke (undo brings it back).", discussion: "Example:\n  storyteller strokes erase \"Night Train\" 1-2/ink 3")
        @Argument(help: Help.project) var project: String?
        @Argument(help: Help.layer) var layer: String?
        @Argument(help: Help.stroke) var stroke: String?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        mutating func validate() throws { (project, layer, stroke) = try shiftedForCurrentProject(project, layer, stroke, ("LAYER", "STROKE")) }
        func operations(_ names: Names, in project: String) throws -> [API.EditOperation] {
            let layer = try names.layer(self.layer!, in: project)
            return [.eraseStroke(layer: layer, stroke: try names.stroke(stroke!, layer: layer, in: project))]
        }
        func report(created: [String?], names: Names, in project: String) -> String { "erased stroke \(stroke!) of layer \(layer!)" }
        func reworded(code: String, message: String) -> String? {
            lockedLayerAdvice(code: code, message: message, project: project, layer: layer)
        }
    }

    struct Replace: EditCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace a stroke's value: restyle it, move/scale it, or bring it back after an erase.",
            discussion: "Example:\n  storyteller strokes replace \"Night Train\" 1-2/ink 3 --color '#0000ff' --translate 0.1,-0.05")
        @Argument(help: Help.project) var project: String?
        @Argument(help: Help.layer) var layer: String?
        @Argument(help: Help.stroke) var stroke: String?
        @OptionGroup var brush: BrushOptions
        @Option(parsing: .unconditional, help: "Move by DX,DY (fractions of the frame), e.g. -0.1,0.05.") var translate: String?
        @Option(parsing: .unconditional, help: "Scale by this factor (about the frame's origin).") var scale: Double?
        @Flag(help: "Bring the stroke back if it was erased.") var restore = false
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        mutating func validate() throws { (project, layer, stroke) = try shiftedForCurrentProject(project, layer, stroke, ("LAYER", "STROKE")) }
        func operations(_ names: Names, in project: String) throws -> [API.EditOperation] {
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
            let layer = try names.layer(self.layer!, in: project)
            return [
                .replaceStroke(
                    layer: layer, stroke: try names.stroke(stroke!, layer: layer, in: project), restore: restore, brush: patch,
                    transform: transform)
            ]
        }
        func report(created: [String?], names: Names, in project: String) -> String { "replaced stroke \(stroke!) of layer \(layer!)" }
        func reworded(code: String, message: String) -> String? {
            lockedLayerAdvice(code: code, message: message, project: project, layer: layer)
        }
    }
}
