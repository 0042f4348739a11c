import StoryAPI
import StoryCore

extension API.EditOperation {
    /// Applies the operations in order inside one edit; the ids created, one per
    /// operation (nil for those that create nothing).
    /// - Throws: `DocumentError` for an operation the document refuses,
    ///   `APIError(.layerLocked)` for a stroke edit on a locked layer (as the
    ///   edit sees it: a `set locked` earlier in the same request counts).
    static func apply(_ operations: [API.EditOperation], to editor: inout ProjectEditor) throws -> [OpID?] {
        var created: [OpID?] = []
        func resolve(_ reference: API.ObjectReference) throws(DocumentError) -> OpID {
            switch reference {
            case .id(let id): return id
            case .created(let index):
                guard index < created.count, let id = created[index] else { throw DocumentError(.invalidValue, "$\(index) created nothing") }
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
                let id = try resolve(object)
                try checkNotTheProject(id, "delete")
                try editor.delete(id)
                created.append(nil)
            case .restore(let object):
                let id = try resolve(object)
                try checkNotTheProject(id, "restore")
                try editor.restore(id)
                created.append(nil)
            case .set(let object, let key, let value):
                try editor.set(key, to: value, on: try resolve(object))
                created.append(nil)
            case .duplicateShot(let shot, let at):
                created.append(try editor.duplicateShot(try resolve(shot), at: at))
            case .addStroke(let layer, let brush, let points):
                let layerID = try resolve(layer)
                try checkUnlocked(layerID, in: editor)
                created.append(try editor.addStroke(to: layerID, brush: brush, points: points))
            case .eraseStroke(let layer, let stroke):
                let layerID = try resolve(layer)
                try checkUnlocked(layerID, in: editor)
                try editor.eraseStroke(try resolve(stroke), in: layerID)
                created.append(nil)
            case .replaceStroke(let layer, let stroke, let restore, let patch, let transform):
                let (layerID, strokeID) = (try resolve(layer), try resolve(stroke))
                try checkUnlocked(layerID, in: editor)
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
            case .addTag(let object, let tag):
                try editor.addTag(tag, to: try resolve(object))
                created.append(nil)
            case .removeTag(let object, let tag):
                try editor.removeTag(tag, from: try resolve(object))
                created.append(nil)
            }
        }
        return created
    }

    /// The project itself is deleted and restored by its own routes (for
    /// everyone, or hidden here), never by an edit of an object.
    static func checkNotTheProject(_ object: OpID, _ verb: String) throws(APIError) {
        guard object == .root else { return }
        throw APIError(
            .badRequest,
            "'object' names the project itself: \(verb) it with \(verb == "delete" ? "DELETE /v1/projects/{id}" : "POST /v1/projects/{id}/restore")")
    }

    /// Refuses a stroke edit on a locked layer. The lock is advisory: it is
    /// checked here, for edits made through this daemon, and nowhere else; a
    /// peer's strokes on a layer locked here (drawn before the lock reached
    /// it, or by other software) still merge, so nothing anybody drew is lost
    /// (docs/crdt.md, "Locked layers").
    /// - Throws: `APIError(.layerLocked)` naming the layer and its shot.
    static func checkUnlocked(_ layer: OpID, in editor: ProjectEditor) throws(APIError) {
        guard editor.kind(of: layer) == .layer else { return }
        let name = editor.field(.name, of: layer).string.map { "layer \($0)" } ?? "layer \(layer)"
        let shot = editor.container(of: layer).map { "shot \(editor.label(ofShot: $0))" } ?? "its shot"
        if editor.field(.image, of: layer).media != nil {
            throw APIError(.conflict, "\(name) in \(shot) is an image layer: draw strokes on another layer above or below it")
        }
        guard editor.field(.locked, of: layer) == .bool(true) else { return }
        throw APIError(.layerLocked, "\(name) in \(shot) is locked; unlock it (set 'locked' to false) to change its strokes")
    }
}
