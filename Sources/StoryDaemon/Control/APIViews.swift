import StoryAPI
import StoryCore
import StoryStore

// The API's shapes made from StoryCore's views: the one place where a view
// becomes JSON-ready values (ids as strings, colours as #rrggbbaa).

extension API.Project {
    /// The project without its scenes (`ProjectJSONStream` adds them a piece at a time).
    init(record: DocumentRecord, document: ProjectDocument, trash: API.Trash?, scenes: [API.Scene]) {
        let view = document.view
        self.init(
            id: record.id.description, name: record.name, title: view.title, description: view.description, aspectRatio: view.aspectRatio,
            createdAt: view.createdAt, updatedAt: view.updatedAt, deleted: record.isDeleted, trash: trash,
            role: document.localRole.description, readOnly: !document.localRole.canWrite, owner: document.owner?.description,
            legacy: document.isLegacy, tags: view.tags, scenes: scenes, onionBefore: view.onionBefore.map(\.hexRGBA),
            onionAfter: view.onionAfter.map(\.hexRGBA))
    }
}

extension API.Trash {
    /// How a project is in the trash here (nil: it is not). Deleted for
    /// everyone wins over hidden here; `purgeTime` is when the retention
    /// (nil: never) ends, counted as `DocumentRecord.retentionStart` says.
    init?(_ record: DocumentRecord, retention: TrashRetention?, localPeer: PeerID) {
        if record.isDeletedForEveryone {
            self.init(
                scope: Self.everyone, by: record.deletedBy?.description, time: record.deletedTime ?? record.deletedSeen,
                purgeTime: retention.flatMap { retention in record.retentionStart.map { $0 + retention.milliseconds } })
        } else if record.isHidden {
            self.init(scope: Self.thisMachine, by: localPeer.description, time: record.hiddenAt, purgeTime: nil)
        } else {
            return nil
        }
    }
}

extension API.Scene {
    init(_ scene: SceneView, shots: [API.Shot]) {
        self.init(id: scene.id.description, number: scene.number, title: scene.title, description: scene.description, shots: shots)
    }
}

extension API.Shot {
    init(_ shot: ShotView, layers: [API.Layer]) {
        self.init(
            id: shot.id.description, label: shot.label, background: shot.background.map(\.hexRGBA), caption: shot.caption, notes: shot.notes,
            dialogue: shot.dialogue, action: shot.action, duration: shot.duration, sound: shot.sound.map { API.Media($0) },
            aspectRatio: shot.aspectRatio, tags: shot.tags, layers: layers)
    }
}

extension API.Layer {
    init(_ layer: LayerView, strokes: [API.Stroke]) {
        self.init(
            id: layer.id.description, name: layer.name, visible: layer.isVisible, locked: layer.isLocked, opacity: layer.opacity,
            transform: layer.transform.components, group: layer.group?.description,
            image: layer.image.map { API.Media($0) }, fit: layer.fit, strokes: strokes)
    }
}

extension API.BrushStyle {
    init(_ brush: Brush) {
        self.init(tool: brush.tool.name, color: brush.color.hexRGBA, width: brush.width, cap: brush.cap.name, join: brush.join.name)
    }
}

extension API.LibraryNode {
    /// A node of a library view; `documents` are the documents on this machine.
    init(_ node: LibraryNodeView, documents: Set<DocumentID>) {
        self.init(
            id: LibraryReference.text(of: node.id), kind: node.kind == .folder || node.id == .incoming ? "folder" : "project", name: node.name,
            description: node.description, parent: LibraryReference.text(of: node.parent), depth: node.depth,
            project: node.document?.description, createdAt: node.createdAt, updatedAt: node.updatedAt, inTrash: node.isInTrash,
            available: node.document.map { documents.contains($0) })
    }

    /// A node of one of the library documents (`set`), at `depth` under
    /// `parent` as shown: an entry naming a shared folder is a folder.
    init(_ node: LibraryNodeView, in library: DocumentID, set: LibrarySet, depth: Int, parent: String, documents: Set<DocumentID>) {
        let folder = node.document.flatMap { set.isFolder($0) ? $0 : nil }
        self.init(
            id: set.text(of: LibraryPlace(library: library, node: node.id)),
            kind: node.kind == .folder || node.id == .incoming || folder != nil ? "folder" : "project", name: node.name,
            description: node.description, parent: parent, depth: depth, project: folder == nil ? node.document?.description : nil,
            createdAt: node.createdAt, updatedAt: node.updatedAt, inTrash: node.isInTrash,
            available: node.document.map { documents.contains($0) && !set.isPlanted(node) }, folder: folder?.description,
            library: library == set.main ? nil : library.description,
            unavailable: set.isPlanted(node)
                ? "filed by \(node.filedBy.map(\.short) ?? "an unknown author"), who was never given it to share; it grants nothing" : nil)
        formerPath = set.formerPath(of: LibraryPlace(library: library, node: node.id))
    }

    /// A project in the virtual Incoming: on this machine, listed by no
    /// library here. Its id is the project's (filing it gives it an entry).
    init(incoming record: DocumentRecord) {
        self.init(
            id: record.id.description, kind: "project", name: record.name, description: nil, parent: "incoming", depth: 1,
            project: record.id.description, createdAt: record.created, updatedAt: record.created, inTrash: false, available: true)
    }

    /// The Incoming folder when only virtual entries are in it.
    static let incomingFolder = API.LibraryNode(
        id: "incoming", kind: "folder", name: "Incoming", description: nil, parent: "root", depth: 0, project: nil, createdAt: 0,
        updatedAt: 0, inTrash: false, available: nil)
}
