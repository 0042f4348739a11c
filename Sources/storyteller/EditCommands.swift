import ArgumentParser
import Foundation

/// Sends one batch of edit operations; the ids the operations created.
func edit(_ options: ClientOptions, project: String, session: String?, _ ops: [[String: Any]]) throws -> [Any] {
    var body: [String: Any] = ["ops": ops]
    if let session { body["session"] = session }
    let result = try options.call("POST", "/v1/projects/\(segment(project))/edits", body: body) as? [String: Any] ?? [:]
    return result["created"] as? [Any] ?? []
}

/// Options of commands that edit a project.
struct EditOptions: ParsableArguments {
    @Option(help: "Undo session: `undo --session S` undoes only these edits (default: the daemon's default session).")
    var session: String?
}

struct Scenes: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Scenes of a project.", subcommands: [Add.self, Move.self, Delete.self, Set.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a scene; prints its id.")
        @Argument var project: String
        @Option(help: "Position (0 = first; default: last).") var at: Int?
        @Option var title: String?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func run() throws {
            var op: [String: Any] = ["op": "scene.add"]
            if let at { op["at"] = at }
            if let title { op["title"] = title }
            let created = try edit(options, project: project, session: editOptions.session, [op])
            if !options.json { print(text(created.first)) }
        }
    }

    struct Move: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move a scene to another position.")
        @Argument var project: String
        @Argument var scene: String
        @Option(help: "New position (0 = first).") var to: Int
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func run() throws {
            _ = try edit(options, project: project, session: editOptions.session, [["op": "move", "object": scene, "to": to]])
            if !options.json { print("moved \(scene)") }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a scene (undo brings it back).")
        @Argument var project: String
        @Argument var scene: String
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func run() throws {
            _ = try edit(options, project: project, session: editOptions.session, [["op": "delete", "object": scene]])
            if !options.json { print("deleted \(scene)") }
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set a scene's title or description.")
        @Argument var project: String
        @Argument var scene: String
        @Option var title: String?
        @Option var description: String?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func run() throws {
            var ops: [[String: Any]] = []
            if let title { ops.append(["op": "set", "object": scene, "field": "title", "value": title]) }
            if let description { ops.append(["op": "set", "object": scene, "field": "description", "value": description]) }
            guard !ops.isEmpty else { throw ValidationError("give --title or --description") }
            _ = try edit(options, project: project, session: editOptions.session, ops)
            if !options.json { print("set \(scene)") }
        }
    }
}

struct Shots: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Shots of a scene.", subcommands: [Add.self, Move.self, Duplicate.self, Delete.self, Set.self])

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set a shot's background, caption, notes, duration or frame aspect ratio.")
        @Argument var project: String
        @Argument var shot: String
        @Option(help: "Background colour, #rrggbb.") var background: String?
        @Option var caption: String?
        @Option var notes: String?
        @Option(help: "Seconds.") var duration: Double?
        @Option(name: .customLong("aspect-ratio"), help: "Frame width / height, e.g. 1.78.") var aspectRatio: Double?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func run() throws {
            var ops: [[String: Any]] = []
            func set(_ field: String, _ value: Any) { ops.append(["op": "set", "object": shot, "field": field, "value": value]) }
            if let background { set("background", background) }
            if let caption { set("caption", caption) }
            if let notes { set("notes", notes) }
            if let duration { set("duration", duration) }
            if let aspectRatio { set("aspectRatio", aspectRatio) }
            guard !ops.isEmpty else { throw ValidationError("give at least one of --background, --caption, --notes, --duration, --aspect-ratio") }
            _ = try edit(options, project: project, session: editOptions.session, ops)
            if !options.json { print("set \(shot)") }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a shot to a scene; prints its id.")
        @Argument var project: String
        @Argument var scene: String
        @Option(help: "Position in the scene (default: last).") var at: Int?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func run() throws {
            var op: [String: Any] = ["op": "shot.add", "scene": scene]
            if let at { op["at"] = at }
            let created = try edit(options, project: project, session: editOptions.session, [op])
            if !options.json { print(text(created.first)) }
        }
    }

    struct Move: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move a shot, within its scene or to another (--scene).")
        @Argument var project: String
        @Argument var shot: String
        @Option(help: "New position.") var to: Int
        @Option(help: "Target scene (default: the shot's own).") var scene: String?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func run() throws {
            var op: [String: Any] = ["op": "move", "object": shot, "to": to]
            if let scene { op["in"] = scene }
            _ = try edit(options, project: project, session: editOptions.session, [op])
            if !options.json { print("moved \(shot)") }
        }
    }

    struct Duplicate: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Duplicate a shot (its strokes are shared, not copied); prints the new id.")
        @Argument var project: String
        @Argument var shot: String
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func run() throws {
            let created = try edit(options, project: project, session: editOptions.session, [["op": "shot.duplicate", "shot": shot]])
            if !options.json { print(text(created.first)) }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a shot (undo brings it back).")
        @Argument var project: String
        @Argument var shot: String
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func run() throws {
            _ = try edit(options, project: project, session: editOptions.session, [["op": "delete", "object": shot]])
            if !options.json { print("deleted \(shot)") }
        }
    }
}

struct Layers: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Layers of a shot.", subcommands: [Add.self, Move.self, Set.self, Delete.self, Group.self, Ungroup.self])

    struct Move: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move a layer up or down (0 = bottom).")
        @Argument var project: String
        @Argument var layer: String
        @Option(help: "New position.") var to: Int
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func run() throws {
            _ = try edit(options, project: project, session: editOptions.session, [["op": "move", "object": layer, "to": to]])
            if !options.json { print("moved \(layer)") }
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set a layer's name, visibility, lock, opacity or transform.")
        @Argument var project: String
        @Argument var layer: String
        @Option var name: String?
        @Option(help: "true or false.") var visible: Bool?
        @Option(help: "true or false.") var locked: Bool?
        @Option(help: "0 to 1.") var opacity: Double?
        @Option(help: "Affine transform as JSON [a, b, c, d, tx, ty].") var transform: String?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func run() throws {
            var ops: [[String: Any]] = []
            func set(_ field: String, _ value: Any) { ops.append(["op": "set", "object": layer, "field": field, "value": value]) }
            if let name { set("name", name) }
            if let visible { set("visible", visible) }
            if let locked { set("locked", locked) }
            if let opacity { set("opacity", opacity) }
            if let transform {
                guard let matrix = try? JSONSerialization.jsonObject(with: Data(transform.utf8)) as? [Double], matrix.count == 6 else {
                    throw ValidationError("--transform must be a JSON array of 6 numbers")
                }
                set("transform", matrix)
            }
            guard !ops.isEmpty else { throw ValidationError("give at least one of --name, --visible, --locked, --opacity, --transform") }
            _ = try edit(options, project: project, session: editOptions.session, ops)
            if !options.json { print("set \(layer)") }
        }
    }

    struct Group: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Group layers; prints the group id.")
        @Argument var project: String
        @Argument(help: "Two or more layer ids.") var layers: [String]
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func run() throws {
            let created = try edit(options, project: project, session: editOptions.session, [["op": "layers.group", "layers": layers]])
            if !options.json { print(text(created.first)) }
        }
    }

    struct Ungroup: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Take layers out of their group.")
        @Argument var project: String
        @Argument var layers: [String]
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func run() throws {
            _ = try edit(options, project: project, session: editOptions.session, [["op": "layers.ungroup", "layers": layers]])
            if !options.json { print("ungrouped \(layers.count) layers") }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a layer to a shot; prints its id.")
        @Argument var project: String
        @Argument var shot: String
        @Option var name: String?
        @Option(help: "Position (default: top).") var at: Int?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func run() throws {
            var op: [String: Any] = ["op": "layer.add", "shot": shot]
            if let name { op["name"] = name }
            if let at { op["at"] = at }
            let created = try edit(options, project: project, session: editOptions.session, [op])
            if !options.json { print(text(created.first)) }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a layer (undo brings it back).")
        @Argument var project: String
        @Argument var layer: String
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func run() throws {
            _ = try edit(options, project: project, session: editOptions.session, [["op": "delete", "object": layer]])
            if !options.json { print("deleted \(layer)") }
        }
    }
}

struct Strokes: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Pen strokes of a layer.", subcommands: [Add.self, Erase.self, Replace.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a stroke; prints its id.")
        @Argument var project: String
        @Argument var layer: String
        @Option(help: "Points as a flat JSON array [x, y, pressure, …], x and y in the unit square.") var points: String?
        @Option(help: "Read the points array from a file instead.") var file: String?
        @Option(help: "pen, marker, pencil, eraser, brush or highlighter.") var tool: String?
        @Option(help: "Colour, #rrggbb or #rrggbbaa.") var color: String?
        @Option(help: "Width as a fraction of the frame width.") var width: Double?
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func run() throws {
            let json: Data
            switch (points, file) {
            case (let text?, nil): json = Data(text.utf8)
            case (nil, let path?): json = try Data(contentsOf: URL(fileURLWithPath: path))
            default: throw ValidationError("give the points with --points JSON or --file FILE")
            }
            guard let array = try? JSONSerialization.jsonObject(with: json) as? [Any] else {
                throw ValidationError("the points must be a JSON array of numbers")
            }
            var brush: [String: Any] = [:]
            if let tool { brush["tool"] = tool }
            if let color { brush["color"] = color }
            if let width { brush["width"] = width }
            var op: [String: Any] = ["op": "stroke.add", "layer": layer, "points": array]
            if !brush.isEmpty { op["brush"] = brush }
            let created = try edit(options, project: project, session: editOptions.session, [op])
            if !options.json { print(text(created.first)) }
        }
    }

    struct Erase: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Erase a stroke (undo brings it back).")
        @Argument var project: String
        @Argument var layer: String
        @Argument var stroke: String
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func run() throws {
            _ = try edit(options, project: project, session: editOptions.session, [["op": "stroke.erase", "layer": layer, "stroke": stroke]])
            if !options.json { print("erased \(stroke)") }
        }
    }

    struct Replace: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace a stroke's value: restyle it, move/scale it, or bring it back after an erase.")
        @Argument var project: String
        @Argument var layer: String
        @Argument var stroke: String
        @Option(help: "New tool.") var tool: String?
        @Option(help: "New colour, #rrggbb or #rrggbbaa.") var color: String?
        @Option(help: "New width (fraction of the frame width).") var width: Double?
        @Option(help: "Move by DX,DY (fractions of the frame).") var translate: String?
        @Option(help: "Scale by this factor (about the frame's origin).") var scale: Double?
        @Flag(help: "Bring the stroke back if it was erased.") var restore = false
        @OptionGroup var editOptions: EditOptions
        @OptionGroup var options: ClientOptions

        func run() throws {
            var op: [String: Any] = ["op": "stroke.replace", "layer": layer, "stroke": stroke]
            var brush: [String: Any] = [:]
            if let tool { brush["tool"] = tool }
            if let color { brush["color"] = color }
            if let width { brush["width"] = width }
            if !brush.isEmpty { op["brush"] = brush }
            if translate != nil || scale != nil {
                var (dx, dy) = (0.0, 0.0)
                if let translate {
                    let parts = translate.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
                    guard parts.count == 2 else { throw ValidationError("--translate takes DX,DY, like 0.1,-0.05") }
                    (dx, dy) = (parts[0], parts[1])
                }
                let factor = scale ?? 1
                op["transform"] = [factor, 0, 0, factor, dx, dy]
            }
            if restore { op["restore"] = true }
            guard op.count > 3 else { throw ValidationError("give what to change: --tool, --color, --width, --translate, --scale or --restore") }
            _ = try edit(options, project: project, session: editOptions.session, [op])
            if !options.json { print("replaced \(stroke)") }
        }
    }
}

struct Undo: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Undo the last edit of a session in a project.")
    @Argument var project: String
    @OptionGroup var editOptions: EditOptions
    @OptionGroup var options: ClientOptions

    func run() throws {
        let body: [String: Any]? = editOptions.session.map { ["session": $0] }
        let result = try options.call("POST", "/v1/projects/\(segment(project))/undo", body: body) as? [String: Any] ?? [:]
        if !options.json { print((result["undone"] as? Bool) == true ? "undone" : "nothing to undo") }
    }
}

struct Redo: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Redo the last undone edit of a session.")
    @Argument var project: String
    @OptionGroup var editOptions: EditOptions
    @OptionGroup var options: ClientOptions

    func run() throws {
        let body: [String: Any]? = editOptions.session.map { ["session": $0] }
        let result = try options.call("POST", "/v1/projects/\(segment(project))/redo", body: body) as? [String: Any] ?? [:]
        if !options.json { print((result["redone"] as? Bool) == true ? "redone" : "nothing to redo") }
    }
}
