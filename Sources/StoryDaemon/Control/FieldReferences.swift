import Foundation
import StoryAPI
import StoryCore

/// The text fields of a project as a user names them: `title` (the
/// project's), `2.title` (scene 2), `1-2.caption` or `1B.caption` (a shot),
/// `1-2/Ink.name` (a layer by name, or by id when its name is not unique),
/// or any object's id before the dot (`42@00c0ffee00c0ffee.caption`).
/// Only what is shown has a name: a deleted shot's fields have none.
struct FieldReferences {
    struct Target {
        var kind: ObjectKind
        /// What goes before `.field` (empty for the project).
        var prefix: String
        /// Where it is, in the words search uses ("Scene 1 › Shot 1-2").
        var label: String
        var path: [OpID]
    }

    private var targets: [OpID: Target] = [:]
    private var names: [String: OpID] = ["project": .root, "": .root]

    /// The names of everything `view` shows. O(objects).
    init(_ view: ProjectView) {
        targets[.root] = Target(kind: .project, prefix: "", label: "Project", path: [])
        for scene in view.scenes {
            let sceneLabel = "Scene \(scene.label)"
            add(scene.id, Target(kind: .scene, prefix: scene.label, label: sceneLabel, path: [scene.id]))
            for (index, shot) in scene.shots.enumerated() {
                let shotLabel = "\(sceneLabel) › Shot \(shot.label)"
                add(shot.id, Target(kind: .shot, prefix: shot.label, label: shotLabel, path: [scene.id, shot.id]))
                names["\(scene.number)\(API.letterLabel(index))".lowercased()] = shot.id
                for layer in shot.layers {
                    let name = layer.name ?? ""
                    let unique = !name.isEmpty && !name.contains(".") && shot.layers.filter { $0.name == layer.name }.count == 1
                    let prefix = "\(shot.label)/\(unique ? name : layer.id.description)"
                    add(layer.id, Target(kind: .layer, prefix: prefix, label: "\(shotLabel) › Layer \(name)", path: [scene.id, shot.id, layer.id]))
                    names["\(shot.label)/\(layer.id)".lowercased()] = layer.id
                }
            }
        }
    }

    private mutating func add(_ id: OpID, _ target: Target) {
        targets[id] = target
        names[target.prefix.lowercased()] = id
        names[id.description.lowercased()] = id
    }

    /// Where an object is shown, or nil if it is not.
    func target(of object: OpID) -> Target? { targets[object] }

    /// The reference of a field, or nil if its object is not shown.
    func text(of object: OpID, key: FieldKey) -> String? {
        guard let target = targets[object] else { return nil }
        return target.prefix.isEmpty ? "\(key)" : "\(target.prefix).\(key)"
    }

    /// The object and field a reference names.
    /// - Throws: `APIError(.notFound)` for a reference to nothing shown or a
    ///   field that keeps no overwritten values.
    func resolve(_ text: String) throws(APIError) -> (object: OpID, key: FieldKey) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let objectPart: Substring
        let keyPart: Substring
        if let dot = trimmed.lastIndex(of: ".") {
            (objectPart, keyPart) = (trimmed[..<dot], trimmed[trimmed.index(after: dot)...])
        } else {
            (objectPart, keyPart) = ("", trimmed[...])
        }
        let fields = FieldKey.allCases.filter(\.keepsOverwrittenValues).map(\.description)
        guard let key = FieldKey(name: String(keyPart)), key.keepsOverwrittenValues else {
            throw APIError(
                .notFound,
                "no field '\(keyPart)' in '\(text)': the text fields are \(fields.joined(separator: ", ")) (e.g. 1-2.caption, 2.title, title)")
        }
        guard let object = names[objectPart.lowercased()] else {
            throw APIError(
                .notFound,
                "'\(objectPart)' in '\(text)' names no scene, shot or layer shown (scenes by number: 2.title, shots by label: 1-2.caption, layers: 1-2/Ink.name)"
            )
        }
        return (object, key)
    }
}
