package import StoryCore

extension API {
    /// `POST /v1/projects/{id}/edits`: operations applied in order as one
    /// change (all or nothing).
    package struct EditRequest: Codable, Sendable {
        package var ops: [EditOperation]
        /// Undo session: `undo` with the same session undoes these edits (default: the daemon's default session).
        package var session: String?

        /// At most this many operations in one request.
        package static let maximumOperations = 10_000

        package init(ops: [EditOperation], session: String? = nil) {
            self.ops = ops
            self.session = session
        }

        private enum CodingKeys: String, CodingKey { case ops, session }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            guard container.contains(.ops) else {
                throw DecodingError.keyNotFound(CodingKeys.ops, .init(codingPath: [], debugDescription: "no ops"))
            }
            var list = try container.nestedUnkeyedContainer(forKey: .ops)
            guard let count = list.count, count > 0 else {
                throw DecodingError.dataCorruptedError(forKey: .ops, in: container, debugDescription: "must be a non-empty array of operations")
            }
            guard count <= Self.maximumOperations else {
                throw DecodingError.dataCorruptedError(
                    forKey: .ops, in: container, debugDescription: "holds \(count) operations; at most \(Self.maximumOperations) per request")
            }
            var ops: [EditOperation] = []
            ops.reserveCapacity(count)
            while !list.isAtEnd { ops.append(try list.decode(EditOperation.self)) }
            self.ops = ops
            session = try UndoRequest.session(in: container, forKey: .session)
        }
    }

    /// The answer to an edit.
    package struct EditResult: Codable, Sendable {
        /// Per operation: the id it created, or null.
        package let created: [String?]
        /// False when the operations changed nothing (e.g. setting a field to its value).
        package let changed: Bool

        package init(created: [String?], changed: Bool) {
            self.created = created
            self.changed = changed
        }

        private enum CodingKeys: String, CodingKey { case created, changed }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            var list = container.nestedUnkeyedContainer(forKey: .created)
            for id in created {
                if let id { try list.encode(id) } else { try list.encodeNil() }
            }
            try container.encode(changed, forKey: .changed)
        }
    }

    /// `POST /v1/projects/{id}/undo` and `…/redo` (the body is optional).
    package struct UndoRequest: Codable, Sendable {
        package var session: String?
        /// When the session's last edit was overruled (someone else changed
        /// all of it since), pass over it to the newest edit that still has
        /// something of its own. Default false: an overruled edit is reported
        /// and nothing is done.
        package var older: Bool?

        package init(session: String? = nil, older: Bool? = nil) {
            self.session = session
            self.older = older
        }

        private enum CodingKeys: String, CodingKey { case session, older }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            session = try Self.session(in: container, forKey: .session)
            do {
                older = try container.decodeIfPresent(Bool.self, forKey: .older)
            } catch {
                throw DecodingError.dataCorruptedError(forKey: .older, in: container, debugDescription: "must be true or false")
            }
        }

        /// An undo session name: 1 to 64 bytes.
        static func session<Key: CodingKey>(in container: KeyedDecodingContainer<Key>, forKey key: Key) throws -> String? {
            guard container.contains(key), try container.decodeNil(forKey: key) == false else { return nil }
            let text: String
            do { text = try container.decode(String.self, forKey: key) } catch {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "must be a string of 1 to 64 bytes")
            }
            guard !text.isEmpty, text.utf8.count <= 64 else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "must be a string of 1 to 64 bytes")
            }
            return text
        }
    }

    /// What an undo or redo did. `undone` (or `redone`): whether something
    /// was taken back; `summary`: what the edit concerned did ("moved shot
    /// 1-2 to scene 2 (now 2-1)"); `overruled`: the session's last edit was
    /// changed all over by others since, so nothing was done (ask again with
    /// `older` to pass over it); `overruledBy`: the peer ids whose later
    /// edits left (parts of) it alone; `partsLeftAlone`: how many parts
    /// were left as others made them; `passedOver`: with `older`, the
    /// overruled edits passed over.
    package struct UndoResult: Codable, Sendable {
        package let undone: Bool?
        package let redone: Bool?
        package let summary: String?
        package let overruled: Bool
        package let overruledBy: [String]
        package let partsLeftAlone: Int
        package let passedOver: [String]

        package init(
            undone: Bool? = nil, redone: Bool? = nil, summary: String? = nil, overruled: Bool = false, overruledBy: [String] = [],
            partsLeftAlone: Int = 0, passedOver: [String] = []
        ) {
            self.undone = undone
            self.redone = redone
            self.summary = summary
            self.overruled = overruled
            self.overruledBy = overruledBy
            self.partsLeftAlone = partsLeftAlone
            self.passedOver = passedOver
        }

        private enum CodingKeys: String, CodingKey { case undone, redone, summary, overruled, overruledBy, partsLeftAlone, passedOver }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            undone = try container.decodeIfPresent(Bool.self, forKey: .undone)
            redone = try container.decodeIfPresent(Bool.self, forKey: .redone)
            summary = try container.decodeIfPresent(String.self, forKey: .summary)
            overruled = try container.decodeIfPresent(Bool.self, forKey: .overruled) ?? false
            overruledBy = try container.decodeIfPresent([String].self, forKey: .overruledBy) ?? []
            partsLeftAlone = try container.decodeIfPresent(Int.self, forKey: .partsLeftAlone) ?? 0
            passedOver = try container.decodeIfPresent([String].self, forKey: .passedOver) ?? []
        }
    }

    /// An object an operation is about: an id, or `$N`, the object operation
    /// N of the same request created.
    package enum ObjectReference: Hashable, Sendable, CustomStringConvertible, Codable {
        case id(OpID)
        case created(Int)

        /// Parses `counter@replica` or `$N`; nil for anything else.
        package init?(_ text: String) {
            if text.hasPrefix("$") {
                guard let index = Int(text.dropFirst()), index >= 0 else { return nil }
                self = .created(index)
            } else {
                guard let id = OpID(text) else { return nil }
                self = .id(id)
            }
        }

        package var description: String {
            switch self {
            case .id(let id): id.description
            case .created(let index): "$\(index)"
            }
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let reference = ObjectReference(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not an object id or $N")
            }
            self = reference
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(description)
        }
    }

    /// The brush fields a `stroke.replace` changes (only those given).
    package struct BrushPatch: Hashable, Sendable {
        package var tool: Brush.Tool?
        package var color: Color?
        package var width: Float?
        package var cap: Brush.Cap?
        package var join: Brush.Join?

        package init(tool: Brush.Tool? = nil, color: Color? = nil, width: Float? = nil, cap: Brush.Cap? = nil, join: Brush.Join? = nil) {
            self.tool = tool
            self.color = color
            self.width = width
            self.cap = cap
            self.join = join
        }

        package var isEmpty: Bool { tool == nil && color == nil && width == nil && cap == nil && join == nil }

        /// The brush with these fields changed.
        package func apply(to brush: inout Brush) {
            if let tool { brush.tool = tool }
            if let color { brush.color = color }
            if let width { brush.width = width }
            if let cap { brush.cap = cap }
            if let join { brush.join = join }
        }
    }

    /// One operation of an edit. Unknown `op`s, wrong types, missing fields
    /// and values out of range fail decoding with the field named.
    package enum EditOperation: Hashable, Sendable {
        case addScene(at: Int?, title: String?)
        case addShot(scene: ObjectReference, at: Int?)
        case addLayer(shot: ObjectReference, at: Int?, name: String?)
        /// To position `to` in its list, or in another container (`in`: a shot to another scene, a layer to another shot).
        case move(ObjectReference, to: Int, in: ObjectReference?)
        case delete(ObjectReference)
        case restore(ObjectReference)
        /// Sets a field; the object defaults to the project.
        case set(ObjectReference, FieldKey, FieldValue)
        case duplicateShot(ObjectReference, at: Int?)
        case addStroke(layer: ObjectReference, brush: Brush, points: [Point])
        case eraseStroke(layer: ObjectReference, stroke: ObjectReference)
        /// Brings an erased stroke back (`restore`), then restyles and/or
        /// transforms it (composed after its own transform).
        case replaceStroke(layer: ObjectReference, stroke: ObjectReference, restore: Bool, brush: BrushPatch?, transform: Affine?)
        case group([ObjectReference])
        case ungroup([ObjectReference])
        /// Puts a tag (trimmed, 1…64 bytes) on the project (the default object) or a shot.
        case addTag(ObjectReference, tag: String)
        /// Takes a tag (in any case) off the project (the default object) or a shot.
        case removeTag(ObjectReference, tag: String)

        /// The `op` names, as the JSON spells them.
        package static let names = [
            "scene.add", "shot.add", "layer.add", "move", "delete", "restore", "set", "shot.duplicate", "stroke.add", "stroke.erase",
            "stroke.replace", "layers.group", "layers.ungroup", "tag.add", "tag.remove",
        ]

        /// At most this many points in one stroke.
        package static let maximumPoints = 100_000

        package var name: String {
            switch self {
            case .addScene: "scene.add"
            case .addShot: "shot.add"
            case .addLayer: "layer.add"
            case .move: "move"
            case .delete: "delete"
            case .restore: "restore"
            case .set: "set"
            case .duplicateShot: "shot.duplicate"
            case .addStroke: "stroke.add"
            case .eraseStroke: "stroke.erase"
            case .replaceStroke: "stroke.replace"
            case .group: "layers.group"
            case .ungroup: "layers.ungroup"
            case .addTag: "tag.add"
            case .removeTag: "tag.remove"
            }
        }
    }
}

// MARK: - JSON

extension API.EditOperation: Codable {
    package init(from decoder: any Decoder) throws {
        let fields = try OperationFields(decoder)
        let name = try fields.requiredString("op")
        switch name {
        case "scene.add": self = .addScene(at: try fields.index("at"), title: try fields.string("title"))
        case "shot.add": self = .addShot(scene: try fields.reference("scene"), at: try fields.index("at"))
        case "layer.add": self = .addLayer(shot: try fields.reference("shot"), at: try fields.index("at"), name: try fields.string("name"))
        case "move":
            guard let to = try fields.index("to") else { throw fields.missing("to") }
            self = .move(try fields.reference("object"), to: to, in: try fields.optionalReference("in"))
        case "delete": self = .delete(try fields.reference("object"))
        case "restore": self = .restore(try fields.reference("object"))
        case "shot.duplicate": self = .duplicateShot(try fields.reference("shot"), at: try fields.index("at"))
        case "set":
            let keyName = try fields.requiredString("field")
            guard let key = FieldKey(name: keyName), FieldKey.editable.contains(key) else {
                throw fields.invalid("field", "must be one of \(FieldKey.editable.map(\.description).joined(separator: ", ")) ('\(keyName)' is not)")
            }
            self = .set(try fields.optionalReference("object") ?? .id(.root), key, try fields.value(for: key))
        case "stroke.add":
            // The points first: the largest part, and the one most often wrong.
            let points = try fields.points()
            let brush = try fields.brush()
            self = .addStroke(layer: try fields.reference("layer"), brush: brush, points: points)
        case "stroke.erase": self = .eraseStroke(layer: try fields.reference("layer"), stroke: try fields.reference("stroke"))
        case "stroke.replace":
            let patch = try fields.brushPatch()
            let transform = try fields.has("transform") ? try fields.transform("transform") : nil
            let restore = try fields.bool("restore") ?? false
            guard restore || patch != nil || transform != nil else {
                throw fields.invalid("brush", "is missing: stroke.replace needs 'brush', 'transform' and/or 'restore': true")
            }
            self = .replaceStroke(
                layer: try fields.reference("layer"), stroke: try fields.reference("stroke"), restore: restore, brush: patch, transform: transform)
        case "layers.group", "layers.ungroup":
            let layers = try fields.references("layers")
            self = name == "layers.group" ? .group(layers) : .ungroup(layers)
        case "tag.add", "tag.remove":
            let tag = try fields.tag()
            let object = try fields.optionalReference("object") ?? .id(.root)
            self = name == "tag.add" ? .addTag(object, tag: tag) : .removeTag(object, tag: tag)
        default:
            throw fields.invalid("op", "is '\(name)', an unknown op (known: \(Self.names.joined(separator: ", ")))")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyKey.self)
        func put<Value: Encodable>(_ key: String, _ value: Value?) throws {
            if let value { try container.encode(value, forKey: AnyKey(key)) }
        }
        try put("op", name)
        switch self {
        case .addScene(let at, let title):
            try put("at", at)
            try put("title", title)
        case .addShot(let scene, let at):
            try put("scene", scene)
            try put("at", at)
        case .addLayer(let shot, let at, let name):
            try put("shot", shot)
            try put("at", at)
            try put("name", name)
        case .move(let object, let to, let container):
            try put("object", object)
            try put("to", to)
            try put("in", container)
        case .delete(let object), .restore(let object):
            try put("object", object)
        case .set(let object, let key, let value):
            try put("object", object)
            try put("field", key.description)
            switch value {
            case .null: try container.encodeNil(forKey: AnyKey("value"))
            case .string(let text): try put("value", text)
            case .number(let number): try put("value", number)
            case .bool(let flag): try put("value", flag)
            case .color(let color): try put("value", color.hexRGBA)
            case .transform(let affine): try put("value", affine.components)
            case .id(let id): try put("value", id.description)
            case .media(let media): try put("value", API.Media(media))
            }
        case .duplicateShot(let shot, let at):
            try put("shot", shot)
            try put("at", at)
        case .addStroke(let layer, let brush, let points):
            try put("layer", layer)
            try put("brush", API.BrushPatch(tool: brush.tool, color: brush.color, width: brush.width, cap: brush.cap, join: brush.join))
            var flat: [Double] = []
            flat.reserveCapacity(points.count * 3)
            for point in points { flat += [point.x, point.y, point.pressure] }
            try put("points", flat)
        case .eraseStroke(let layer, let stroke):
            try put("layer", layer)
            try put("stroke", stroke)
        case .replaceStroke(let layer, let stroke, let restore, let brush, let transform):
            try put("layer", layer)
            try put("stroke", stroke)
            if restore { try put("restore", true) }
            try put("brush", brush)
            try put("transform", transform?.components)
        case .group(let layers), .ungroup(let layers):
            try put("layers", layers)
        case .addTag(let object, let tag), .removeTag(let object, let tag):
            try put("object", object)
            try put("tag", tag)
        }
    }
}

extension API.BrushPatch: Codable {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        func text(_ key: String) throws -> String? {
            guard container.contains(AnyKey(key)) else { return nil }
            guard try !container.decodeNil(forKey: AnyKey(key)) else { return nil }
            do { return try container.decode(String.self, forKey: AnyKey(key)) } catch {
                throw DecodingError.dataCorruptedError(forKey: AnyKey(key), in: container, debugDescription: "must be a string")
            }
        }
        func fail(_ key: String, _ message: String) -> DecodingError {
            DecodingError.dataCorruptedError(forKey: AnyKey(key), in: container, debugDescription: message)
        }
        var width: Double?
        if container.contains(AnyKey("width")), try container.decodeNil(forKey: AnyKey("width")) == false {
            do { width = try container.decode(Double.self, forKey: AnyKey("width")) } catch { throw fail("width", "must be a number") }
        }
        do {
            self = try Self.checked(tool: try text("tool"), color: try text("color"), width: width, cap: try text("cap"), join: try text("join"))
        } catch let error as InvalidField {
            throw fail(error.field, error.requirement)
        }
        for key in container.allKeys where !["tool", "color", "width", "cap", "join"].contains(key.stringValue) {
            throw fail(key.stringValue, "is not a brush field (tool, color, width, cap, join)")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyKey.self)
        if let tool { try container.encode(tool.name, forKey: AnyKey("tool")) }
        if let color { try container.encode(color.hexRGBA, forKey: AnyKey("color")) }
        if let width { try container.encode(width, forKey: AnyKey("width")) }
        if let cap { try container.encode(cap.name, forKey: AnyKey("cap")) }
        if let join { try container.encode(join.name, forKey: AnyKey("join")) }
    }
}

extension Affine {
    /// `[a, b, c, d, tx, ty]`, as the API writes a transform.
    package var components: [Double] { [a, b, c, d, tx, ty] }
}

/// The fields of one operation object, read with errors that name them.
private struct OperationFields {
    let container: KeyedDecodingContainer<AnyKey>
    /// The operation's index in `ops` (`$N` must name an earlier one).
    let index: Int?

    init(_ decoder: any Decoder) throws {
        container = try decoder.container(keyedBy: AnyKey.self)
        index = decoder.codingPath.last?.intValue
    }

    func has(_ key: String) throws -> Bool {
        guard container.contains(AnyKey(key)) else { return false }
        return try !container.decodeNil(forKey: AnyKey(key))
    }

    func invalid(_ key: String, _ message: String) -> DecodingError {
        DecodingError.dataCorruptedError(forKey: AnyKey(key), in: container, debugDescription: message)
    }

    func missing(_ key: String) -> DecodingError {
        DecodingError.keyNotFound(AnyKey(key), .init(codingPath: container.codingPath, debugDescription: "'\(key)' is required"))
    }

    func requiredString(_ key: String) throws -> String {
        guard try has(key) else { throw missing(key) }
        do { return try container.decode(String.self, forKey: AnyKey(key)) } catch { throw invalid(key, "must be a string") }
    }

    func string(_ key: String) throws -> String? {
        try has(key) ? try requiredString(key) : nil
    }

    func bool(_ key: String) throws -> Bool? {
        guard try has(key) else { return nil }
        do { return try container.decode(Bool.self, forKey: AnyKey(key)) } catch { throw invalid(key, "must be true or false") }
    }

    /// A position: a non-negative integer.
    func index(_ key: String) throws -> Int? {
        guard try has(key) else { return nil }
        let value: Int
        do { value = try container.decode(Int.self, forKey: AnyKey(key)) } catch { throw invalid(key, "must be a non-negative integer") }
        guard value >= 0 else { throw invalid(key, "must be a non-negative integer") }
        return value
    }

    func reference(_ key: String) throws -> API.ObjectReference {
        guard try has(key) else { throw missing(key) }
        return try reference(text: try requiredString(key), key: key)
    }

    func optionalReference(_ key: String) throws -> API.ObjectReference? {
        try has(key) ? try reference(key) : nil
    }

    private func reference(text: String, key: String) throws -> API.ObjectReference {
        guard let reference = API.ObjectReference(text) else { throw invalid(key, "'\(text)' is not an object id or $N") }
        if case .created(let n) = reference, let index, n >= index {
            throw invalid(key, "\(text) does not name an earlier operation")
        }
        return reference
    }

    func references(_ key: String) throws -> [API.ObjectReference] {
        guard try has(key) else { throw missing(key) }
        let texts: [String]
        do { texts = try container.decode([String].self, forKey: AnyKey(key)) } catch { throw invalid(key, "must be an array of ids") }
        guard !texts.isEmpty else { throw invalid(key, "must be a non-empty array of ids") }
        return try texts.map { try reference(text: $0, key: key) }
    }

    func transform(_ key: String) throws -> Affine {
        let numbers: [Double]
        do { numbers = try container.decode([Double].self, forKey: AnyKey(key)) } catch { throw invalid(key, "takes [a, b, c, d, tx, ty]") }
        guard numbers.count == 6 else { throw invalid(key, "takes [a, b, c, d, tx, ty]") }
        guard numbers.allSatisfy(\.isFinite) else { throw invalid(key, "takes finite numbers") }
        return Affine(a: numbers[0], b: numbers[1], c: numbers[2], d: numbers[3], tx: numbers[4], ty: numbers[5])
    }

    /// The value of `set` for a key, of the type the key takes.
    func value(for key: FieldKey) throws -> FieldValue {
        guard container.contains(AnyKey("value")) else { throw missing("value") }
        let isNull = try container.decodeNil(forKey: AnyKey("value"))
        switch key {
        case .title, .description, .caption, .notes, .name, .dialogue, .action:
            if isNull { return .null }
            do { return .string(try container.decode(String.self, forKey: AnyKey("value"))) } catch {
                throw invalid("value", "of '\(key)' takes a string")
            }
        case .aspectRatio, .duration, .opacity:
            if isNull { return .null }
            let number: Double
            do { number = try container.decode(Double.self, forKey: AnyKey("value")) } catch { throw invalid("value", "of '\(key)' takes a number") }
            guard number.isFinite else { throw invalid("value", "of '\(key)' takes a finite number") }
            switch key {
            case .aspectRatio where !(number > 0 && number <= 100):
                throw invalid("value", "of 'aspectRatio' must be above 0 and at most 100 (width / height, e.g. 1.78), not \(number)")
            case .duration where !(0...86_400).contains(number):
                throw invalid("value", "of 'duration' must be 0 to 86400 seconds, not \(number)")
            case .opacity where !(0...1).contains(number):
                throw invalid("value", "of 'opacity' must be 0 to 1, not \(number)")
            default: return .number(number)
            }
        case .visible, .locked:
            do { return .bool(try container.decode(Bool.self, forKey: AnyKey("value"))) } catch {
                throw invalid("value", "of '\(key)' takes true or false")
            }
        case .background, .onionBefore, .onionAfter:
            if isNull && key != .background { return .null }
            guard !isNull, let text = try? container.decode(String.self, forKey: AnyKey("value")), let color = Color(hex: text) else {
                throw invalid("value", "of '\(key)' takes a colour like \"#1e90ff\"")
            }
            return .color(color)
        case .transform:
            return .transform(try transform("value"))
        case .group:
            if isNull { return .null }
            guard let text = try? container.decode(String.self, forKey: AnyKey("value")), let id = OpID(text) else {
                throw invalid("value", "of 'group' takes a layer group id or null")
            }
            return .id(id)
        case .fit:
            if isNull { return .null }
            guard let text = try? container.decode(String.self, forKey: AnyKey("value")), FieldKey.fitModes.contains(text) else {
                throw invalid("value", "of 'fit' takes \(FieldKey.fitModes.map { "\"\($0)\"" }.joined(separator: ", ")) or null")
            }
            return .string(text)
        case .image, .sound:
            if isNull { return .null }
            let media: API.Media
            do { media = try container.decode(API.Media.self, forKey: AnyKey("value")) } catch {
                throw invalid("value", "of '\(key)' takes a media object {\"blob\": SHA-256 hex, \"type\", \"bytes\" …} or null")
            }
            switch media.reference() {
            case .success(let reference):
                guard key == .image ? reference.type.isImage : reference.type.isSound else {
                    throw invalid("value", "of '\(key)' takes \(key == .image ? "an image" : "a sound"), not a \(reference.type)")
                }
                return .media(reference)
            case .failure(let error): throw invalid("value", error.message)
            }
        case .deletedAt:
            // Not editable (`FieldKey.editable`): only deleting a project writes it.
            throw invalid("field", "'deletedAt' is set by deleting the project (DELETE /v1/projects/{id})")
        }
    }

    func brushPatch(allowingEmpty: Bool = false) throws -> API.BrushPatch? {
        guard try has("brush") else { return nil }
        let patch: API.BrushPatch
        do {
            patch = try container.decode(API.BrushPatch.self, forKey: AnyKey("brush"))
        } catch let error as DecodingError {
            if case .typeMismatch = error { throw invalid("brush", "must be an object with tool, color, width, cap and/or join") }
            throw error
        }
        guard allowingEmpty || !patch.isEmpty else { throw invalid("brush", "must give at least one of tool, color, width, cap, join") }
        return patch
    }

    /// A new stroke's brush: the defaults, with the fields given.
    func brush() throws -> Brush {
        var brush = Brush()
        try brushPatch(allowingEmpty: true)?.apply(to: &brush)
        return brush
    }

    /// A tag, trimmed and checked (`Tag.normalized`).
    func tag() throws -> String {
        let text = try requiredString("tag")
        do {
            return try Tag.normalized(text)
        } catch {
            // The rule's words, after the field it names.
            throw invalid("tag", String(error.message.dropFirst("'tag' ".count)))
        }
    }

    func points() throws -> [Point] {
        guard try has("points") else { throw missing("points") }
        let flat: [Double]
        do { flat = try container.decode([Double].self, forKey: AnyKey("points")) } catch {
            throw invalid("points", "must be a flat [x, y, pressure, …] array of numbers")
        }
        do {
            return try API.EditOperation.points(flat: flat)
        } catch {
            // The shared rule's words, after the field it names.
            throw invalid("points", error.problem ?? error.message)
        }
    }
}
