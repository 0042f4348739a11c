/// The value of one last-writer-wins field of a project, scene, shot, layer
/// or library node.
package enum FieldValue: Hashable, Sendable {
    /// Unset: the field shows its default.
    case null
    case string(String)
    case number(Double)
    case bool(Bool)
    case color(Color)
    case transform(Affine)
    /// A reference, e.g. a layer's group id.
    case id(OpID)
    /// An image or a sound: the blob's hash and what it is (`MediaReference`).
    case media(MediaReference)

    /// The string, if this is one.
    package var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number, if this is one.
    package var number: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The Boolean, if this is one.
    package var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The colour, if this is one.
    package var color: Color? {
        if case .color(let value) = self { return value }
        return nil
    }

    /// The transform, if this is one.
    package var transform: Affine? {
        if case .transform(let value) = self { return value }
        return nil
    }

    /// The id, if this is one.
    package var id: OpID? {
        if case .id(let value) = self { return value }
        return nil
    }

    /// The media reference, if this is one.
    package var media: MediaReference? {
        if case .media(let value) = self { return value }
        return nil
    }

    var isNull: Bool { self == .null }

    /// The longest string a field may hold, in UTF-8 bytes.
    package static let maximumStringBytes = 64 * 1024
}

/// The name of a field. Which keys an object has, and of which type, is fixed
/// per kind (`FieldKey.accepts(_:on:)`).
package enum FieldKey: UInt8, CaseIterable, Sendable, CustomStringConvertible {
    case title = 1
    case description = 2
    /// Width / height of the frame (project default, or a shot's own).
    case aspectRatio = 3
    case background = 4
    case caption = 5
    case notes = 6
    /// Seconds.
    case duration = 7
    case name = 8
    case visible = 9
    case locked = 10
    case opacity = 11
    case transform = 12
    case group = 13
    /// When the project was last deleted for everyone (milliseconds since
    /// 1970 on the deleting author's clock), written with the root's deleted
    /// flag by `ProjectEditor.deleteProject`; informational (docs/crdt.md,
    /// "Deleting a project"). Not settable through the control API.
    case deletedAt = 14
    /// A shot's line of dialogue, and what happens in it (storyboard sheets
    /// print both beside the caption).
    case dialogue = 15
    case action = 16
    /// An image layer's picture (`.media`, an image type): a layer with an
    /// image holds no strokes.
    case image = 17
    /// How an image layer's picture fits the frame before its transform:
    /// "contain" (default), "cover" or "stretch".
    case fit = 18
    /// A shot's sound (`.media`, a sound type, with its start offset).
    case sound = 19
    /// The project's onion-skin tints: the shots before the drawn one, and after it (colours).
    case onionBefore = 20
    case onionAfter = 21

    /// The camelCase name used in JSON and on the command line.
    package var description: String {
        switch self {
        case .title: "title"
        case .description: "description"
        case .aspectRatio: "aspectRatio"
        case .background: "background"
        case .caption: "caption"
        case .notes: "notes"
        case .duration: "duration"
        case .name: "name"
        case .visible: "visible"
        case .locked: "locked"
        case .opacity: "opacity"
        case .transform: "transform"
        case .group: "group"
        case .deletedAt: "deletedAt"
        case .dialogue: "dialogue"
        case .action: "action"
        case .image: "image"
        case .fit: "fit"
        case .sound: "sound"
        case .onionBefore: "onionBefore"
        case .onionAfter: "onionAfter"
        }
    }

    /// How an image may fit its frame (`fit`).
    package static let fitModes = ["contain", "cover", "stretch"]

    /// The keys a client may set with an edit: all but `deletedAt`, which
    /// only a project's deletion writes.
    package static let editable = allCases.filter { $0 != .deletedAt }

    /// The key with that name.
    package init?(name: String) {
        guard let key = FieldKey.allCases.first(where: { $0.description == name }) else { return nil }
        self = key
    }

    /// Whether `value` may be stored under this key on an object of `kind`;
    /// `.null` (unset) is always accepted for a key the kind has.
    package func accepts(_ value: FieldValue, on kind: ObjectKind) -> Bool {
        guard kind.has(self) else { return false }
        switch (self, value) {
        case (_, .null): return true
        case (.title, .string(let s)), (.description, .string(let s)), (.caption, .string(let s)),
            (.notes, .string(let s)), (.name, .string(let s)), (.dialogue, .string(let s)), (.action, .string(let s)):
            return s.utf8.count <= FieldValue.maximumStringBytes
        case (.aspectRatio, .number(let n)): return n.isFinite && n > 0 && n <= 100
        case (.duration, .number(let n)): return n.isFinite && n >= 0 && n <= 86_400
        case (.opacity, .number(let n)): return n.isFinite && n >= 0 && n <= 1
        case (.background, .color), (.onionBefore, .color), (.onionAfter, .color): return true
        case (.visible, .bool), (.locked, .bool): return true
        case (.transform, .transform(let t)): return t.isFinite
        case (.group, .id): return true
        case (.deletedAt, .number(let n)): return n.isFinite
        case (.image, .media(let media)): return media.type.isImage && media.isWellFormed && media.offset == 0
        case (.sound, .media(let media)): return media.type.isSound && media.isWellFormed
        case (.fit, .string(let s)): return Self.fitModes.contains(s)
        default: return false
        }
    }
}

/// The kinds of object a document holds.
package enum ObjectKind: UInt8, CaseIterable, Sendable, CustomStringConvertible {
    /// The project itself (its fields live on the root object).
    case project = 0
    case scene = 1
    case shot = 2
    case layer = 3
    /// A library folder.
    case folder = 4
    /// A library entry naming a project document.
    case projectEntry = 5

    package var description: String {
        switch self {
        case .project: "project"
        case .scene: "scene"
        case .shot: "shot"
        case .layer: "layer"
        case .folder: "folder"
        case .projectEntry: "project entry"
        }
    }

    /// The fields an object of this kind has.
    package var fieldKeys: Set<FieldKey> {
        switch self {
        case .project: [.title, .description, .aspectRatio, .deletedAt, .onionBefore, .onionAfter]
        case .scene: [.title, .description]
        case .shot: [.background, .caption, .notes, .duration, .aspectRatio, .dialogue, .action, .sound]
        case .layer: [.name, .visible, .locked, .opacity, .transform, .group, .image, .fit]
        case .folder, .projectEntry: [.name, .description]
        }
    }

    /// Whether objects of this kind have field `key`: `fieldKeys` as bits,
    /// so a check does not build the set (every field a change sets is checked).
    package func has(_ key: FieldKey) -> Bool { Self.fieldMasks[Int(rawValue)] & (1 << UInt32(key.rawValue)) != 0 }

    private static let fieldMasks: [UInt32] = allCases.map { kind in kind.fieldKeys.reduce(0) { $0 | 1 << UInt32($1.rawValue) } }

    /// The kind of object this kind's children are placed in (scenes in the
    /// project, shots in scenes, layers in shots), or nil for the root.
    var containerKind: ObjectKind? {
        switch self {
        case .project, .folder, .projectEntry: nil
        case .scene: .project
        case .shot: .scene
        case .layer: .shot
        }
    }
}

extension ByteWriter {
    mutating func write(fieldValue value: FieldValue) {
        switch value {
        case .null: write(byte: 0)
        case .string(let string):
            write(byte: 1)
            write(string: string)
        case .number(let number):
            write(byte: 2)
            write(double: number)
        case .bool(let bool):
            write(byte: bool ? 4 : 3)
        case .color(let color):
            write(byte: 5)
            write(fixed32: color.rgba)
        case .transform(let affine):
            write(byte: 6)
            write(affine: affine)
        case .id(let id):
            write(byte: 7)
            write(varint: id.counter)
            write(fixed64: id.replica.rawValue)
        case .media(let media):
            write(byte: 8)
            write(media: media)
        }
    }
}

extension ByteReader {
    mutating func readFieldValue() throws(CodecError) -> FieldValue {
        try readFieldValue(tag: try readByte())
    }

    /// Reads the rest of a field value whose tag byte was already read.
    mutating func readFieldValue(tag: UInt8) throws(CodecError) -> FieldValue {
        let start = offset - 1
        switch tag {
        case 0: return .null
        case 1: return .string(try readString("field string"))
        case 2: return .number(try readFiniteDouble("field number"))
        case 3: return .bool(false)
        case 4: return .bool(true)
        case 5: return .color(Color(rgba: try readFixed32()))
        case 6: return .transform(try readAffine())
        case 7: return .id(OpID(counter: try readVarint(), replica: ReplicaID(try readFixed64())))
        case 8: return .media(try readMedia())
        case let tag: throw CodecError(.invalidValue, "unknown field value tag \(tag)", offset: start)
        }
    }
}
