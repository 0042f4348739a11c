import Foundation
import StoryCore

/// One operation of `POST /v1/projects/{id}/edits`, checked before anything
/// is applied. Object references are ids, or `$N` for the object created by
/// operation N of the same batch.
enum EditOperation: Sendable {
    case addScene(at: Int?, title: String?)
    case addShot(scene: Reference, at: Int?)
    case addLayer(shot: Reference, at: Int?, name: String?)
    case move(Reference, to: Int, in: Reference?)
    case delete(Reference)
    case restore(Reference)
    case set(Reference, FieldKey, FieldValue)
    case duplicateShot(Reference, at: Int?)
    case addStroke(layer: Reference, brush: Brush, points: [Point])
    case eraseStroke(layer: Reference, stroke: Reference)
    /// Replaces a stroke's value under its key: brings it back if erased, then
    /// restyles (the given brush fields) and/or transforms it (composed after its transform).
    case replaceStroke(layer: Reference, stroke: Reference, restore: Bool, brush: BrushPatch?, transform: Affine?)
    case group([Reference])
    case ungroup([Reference])

    /// The brush fields a `stroke.replace` changes.
    struct BrushPatch: Sendable {
        var tool: Brush.Tool?
        var color: Color?
        var width: Float?

        func apply(to brush: inout Brush) {
            if let tool { brush.tool = tool }
            if let color { brush.color = color }
            if let width { brush.width = width }
        }
    }

    enum Reference: Sendable {
        case id(OpID)
        case created(Int)
    }

    /// Parses the `ops` array.
    static func parse(_ ops: Any?) throws(ControlError) -> [EditOperation] {
        guard let list = ops as? [Any], !list.isEmpty else { throw ControlError(.badRequest, "'ops' must be a non-empty array") }
        guard list.count <= 10_000 else { throw ControlError(.badRequest, "at most 10000 operations per batch") }
        var result: [EditOperation] = []
        for (index, item) in list.enumerated() {
            guard let op = item as? [String: Any] else { throw ControlError(.badRequest, "ops[\(index)] is not an object") }
            result.append(try parse(op, index: index))
        }
        return result
    }

    private static func parse(_ op: [String: Any], index: Int) throws(ControlError) -> EditOperation {
        func fail(_ message: String) -> ControlError { ControlError(.badRequest, "ops[\(index)]: \(message)") }
        func reference(_ key: String) throws(ControlError) -> Reference {
            guard let text = op[key] as? String else { throw fail("'\(key)' must be an id or $N") }
            if text.hasPrefix("$") {
                guard let n = Int(text.dropFirst()), n >= 0, n < index else { throw fail("'\(key)': \(text) does not name an earlier operation") }
                return .created(n)
            }
            guard let id = OpID(text) else { throw fail("'\(key)': '\(text)' is not an object id") }
            return .id(id)
        }
        func optionalInt(_ key: String) throws(ControlError) -> Int? {
            guard let value = op[key] else { return nil }
            guard let number = value as? NSNumber, !isBoolean(number), let int = Int(exactly: number.doubleValue), int >= 0 else {
                throw fail("'\(key)' must be a non-negative integer")
            }
            return int
        }
        func optionalString(_ key: String) throws(ControlError) -> String? {
            guard let value = op[key] else { return nil }
            guard let string = value as? String else { throw fail("'\(key)' must be a string") }
            return string
        }
        guard let name = op["op"] as? String else { throw fail("missing 'op'") }
        switch name {
        case "scene.add": return .addScene(at: try optionalInt("at"), title: try optionalString("title"))
        case "shot.add": return .addShot(scene: try reference("scene"), at: try optionalInt("at"))
        case "layer.add": return .addLayer(shot: try reference("shot"), at: try optionalInt("at"), name: try optionalString("name"))
        case "move":
            guard let to = try optionalInt("to") else { throw fail("'to' is required") }
            return .move(try reference("object"), to: to, in: op["in"] == nil ? nil : try reference("in"))
        case "delete": return .delete(try reference("object"))
        case "restore": return .restore(try reference("object"))
        case "shot.duplicate": return .duplicateShot(try reference("shot"), at: try optionalInt("at"))
        case "set":
            guard let keyName = op["field"] as? String, let key = FieldKey(name: keyName) else {
                throw fail("'field' must be one of \(FieldKey.allCases.map(\.description).joined(separator: ", "))")
            }
            let object: Reference = op["object"] == nil ? .id(.root) : try reference("object")
            return .set(object, key, try fieldValue(op["value"], for: key, fail: fail))
        case "stroke.add":
            guard let flat = op["points"] as? [Any], !flat.isEmpty, flat.count % 3 == 0, flat.count <= 3 * 100_000 else {
                throw fail("'points' must be a flat [x, y, pressure, …] array (a multiple of 3 numbers)")
            }
            var points: [Point] = []
            points.reserveCapacity(flat.count / 3)
            for i in stride(from: 0, to: flat.count, by: 3) {
                guard let x = (flat[i] as? NSNumber)?.doubleValue, let y = (flat[i + 1] as? NSNumber)?.doubleValue,
                    let p = (flat[i + 2] as? NSNumber)?.doubleValue, x.isFinite, y.isFinite, (0...1).contains(p)
                else { throw fail("point \(i / 3) is not finite numbers with pressure in 0...1") }
                points.append(Point(x: x, y: y, pressure: p))
            }
            return .addStroke(layer: try reference("layer"), brush: try brush(op["brush"], fail: fail), points: points)
        case "stroke.erase": return .eraseStroke(layer: try reference("layer"), stroke: try reference("stroke"))
        case "stroke.replace":
            var patch: BrushPatch?
            if op["brush"] != nil {
                guard let object = op["brush"] as? [String: Any], !object.isEmpty else { throw fail("'brush' must be an object with tool, color and/or width") }
                let full = try brush(object, fail: fail)
                patch = BrushPatch(
                    tool: object["tool"] != nil ? full.tool : nil, color: object["color"] != nil ? full.color : nil,
                    width: object["width"] != nil ? full.width : nil)
            }
            var transform: Affine?
            if let value = op["transform"] {
                guard case .transform(let affine) = try fieldValue(value, for: .transform, fail: fail) else {
                    throw fail("'transform' takes [a, b, c, d, tx, ty]")
                }
                transform = affine
            }
            var restore = false
            if let value = op["restore"] {
                guard isBoolean(value), let flag = value as? Bool else { throw fail("'restore' must be true or false") }
                restore = flag
            }
            guard restore || patch != nil || transform != nil else { throw fail("give 'brush', 'transform' and/or 'restore': true") }
            return .replaceStroke(layer: try reference("layer"), stroke: try reference("stroke"), restore: restore, brush: patch, transform: transform)
        case "layers.group", "layers.ungroup":
            guard let items = op["layers"] as? [String], !items.isEmpty else { throw fail("'layers' must be a non-empty array of ids") }
            var references: [Reference] = []
            for text in items {
                guard let id = OpID(text) else { throw fail("'\(text)' is not a layer id") }
                references.append(.id(id))
            }
            return name == "layers.group" ? .group(references) : .ungroup(references)
        default:
            throw fail("unknown op '\(name)' (scene.add, shot.add, layer.add, move, delete, restore, set, shot.duplicate, stroke.add, stroke.erase, stroke.replace, layers.group, layers.ungroup)")
        }
    }

    private static func fieldValue(_ value: Any?, for key: FieldKey, fail: (String) -> ControlError) throws(ControlError) -> FieldValue {
        switch key {
        case .title, .description, .caption, .notes, .name:
            if value is NSNull { return .null }
            guard let string = value as? String else { throw fail("'\(key)' takes a string") }
            return .string(string)
        case .aspectRatio, .duration, .opacity:
            guard let number = value as? NSNumber, !isBoolean(number), number.doubleValue.isFinite else {
                throw fail("'\(key)' takes a number")
            }
            return .number(number.doubleValue)
        case .visible, .locked:
            guard let number = value as? NSNumber, isBoolean(number) else { throw fail("'\(key)' takes true or false") }
            return .bool(number.boolValue)
        case .background:
            guard let text = value as? String, let color = Color(hex: text.hasPrefix("#") ? String(text.dropFirst()) : text) else {
                throw fail("'background' takes a colour like \"#1e90ff\"")
            }
            return .color(color)
        case .transform:
            guard let numbers = value as? [NSNumber], numbers.count == 6 else { throw fail("'transform' takes [a, b, c, d, tx, ty]") }
            let v = numbers.map(\.doubleValue)
            guard v.allSatisfy(\.isFinite) else { throw fail("'transform' takes finite numbers") }
            return .transform(Affine(a: v[0], b: v[1], c: v[2], d: v[3], tx: v[4], ty: v[5]))
        case .group:
            if value is NSNull { return .null }
            guard let text = value as? String, let id = OpID(text) else { throw fail("'group' takes an id") }
            return .id(id)
        }
    }

    private static func brush(_ value: Any?, fail: (String) -> ControlError) throws(ControlError) -> Brush {
        guard let value else { return Brush() }
        guard let object = value as? [String: Any] else { throw fail("'brush' must be an object") }
        var brush = Brush()
        if let name = object["tool"] {
            guard let text = name as? String, let tool = Brush.Tool(name: text) else {
                throw fail("'brush.tool' must be one of \(Brush.Tool.allCases.map(\.name).joined(separator: ", "))")
            }
            brush.tool = tool
        }
        if let colour = object["color"] {
            guard let text = colour as? String, let color = Color(hex: text.hasPrefix("#") ? String(text.dropFirst()) : text) else {
                throw fail("'brush.color' must be a colour like \"#000000\"")
            }
            brush.color = color
        }
        if let width = object["width"] {
            guard let number = width as? NSNumber, !isBoolean(number) else { throw fail("'brush.width' must be a number") }
            brush.width = number.floatValue
        }
        guard brush.isValid else { throw fail("'brush.width' must be in 0...1 (a fraction of the frame width)") }
        return brush
    }
}

extension EditOperation {
    /// Applies the operations in order inside one edit; the ids created, one per
    /// operation (nil for those that create nothing).
    static func apply(_ operations: [EditOperation], to editor: inout ProjectEditor) throws(DocumentError) -> [OpID?] {
        var created: [OpID?] = []
        func resolve(_ reference: Reference) throws(DocumentError) -> OpID {
            switch reference {
            case .id(let id): return id
            case .created(let index):
                guard let id = created[index] else { throw DocumentError(.invalidValue, "$\(index) created nothing") }
                return id
            }
        }
        for operation in operations {
            switch operation {
            case .addScene(let at, let title):
                let scene = try editor.insertScene(at: at)
                if let title { try editor.set(.title, to: .string(title), on: scene) }
                created.append(scene)
            case .addShot(let scene, let at):
                let container = try resolve(scene)
                created.append(try editor.insertShot(in: container, at: at))
            case .addLayer(let shot, let at, let name):
                let container = try resolve(shot)
                let layer = try editor.insertLayer(in: container, at: at)
                if let name { try editor.set(.name, to: .string(name), on: layer) }
                created.append(layer)
            case .move(let object, let to, let container):
                try editor.move(try resolve(object), to: to, in: try container.map { reference throws(DocumentError) in try resolve(reference) })
                created.append(nil)
            case .delete(let object):
                try editor.delete(try resolve(object))
                created.append(nil)
            case .restore(let object):
                try editor.restore(try resolve(object))
                created.append(nil)
            case .set(let object, let key, let value):
                try editor.set(key, to: value, on: try resolve(object))
                created.append(nil)
            case .duplicateShot(let shot, let at):
                created.append(try editor.duplicateShot(try resolve(shot), at: at))
            case .addStroke(let layer, let brush, let points):
                created.append(try editor.addStroke(to: try resolve(layer), brush: brush, points: points))
            case .eraseStroke(let layer, let stroke):
                try editor.eraseStroke(try resolve(stroke), in: try resolve(layer))
                created.append(nil)
            case .replaceStroke(let layer, let stroke, let restore, let patch, let transform):
                let (layerID, strokeID) = (try resolve(layer), try resolve(stroke))
                if restore { try editor.restoreStroke(strokeID, in: layerID) }
                if let patch { try editor.restyleStrokes([strokeID], in: layerID) { patch.apply(to: &$0) } }
                if let transform { try editor.transformStrokes([strokeID], in: layerID, by: transform) }
                created.append(nil)
            case .group(let layers):
                var ids: [OpID] = []
                for layer in layers { ids.append(try resolve(layer)) }
                created.append(try editor.groupLayers(ids))
            case .ungroup(let layers):
                var ids: [OpID] = []
                for layer in layers { ids.append(try resolve(layer)) }
                try editor.ungroupLayers(ids)
                created.append(nil)
            }
        }
        return created
    }
}

/// Whether a value from JSONSerialization is a JSON true/false (a boolean
/// NSNumber, objCType "c"), not a number.
func isBoolean(_ value: Any) -> Bool {
    if let number = value as? NSNumber { return String(cString: number.objCType) == "c" }
    return value is Bool
}
