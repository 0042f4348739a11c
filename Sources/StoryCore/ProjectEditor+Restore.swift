/// What `restore(_:asIn:)` brings back: the whole project, a scene, or a shot.
package enum RestoreScope: Hashable, Sendable {
    case project
    case scene(OpID)
    case shot(OpID)
}

extension ProjectEditor {
    /// Makes the scope look as it does in `past` (the same project at an
    /// earlier version) with new operations on top of the present: what was
    /// deleted since is restored, what came since is deleted, what moved is
    /// moved back, fields are set to their old values, strokes are put back
    /// or erased. History is not rewritten: the edit merges with concurrent
    /// edits like any other (what somebody did meanwhile elsewhere is not
    /// touched, since this edit never saw it) and `undo` takes it back.
    /// O(size of the scope).
    /// - Throws: `DocumentError(.notFound)` when the scene or shot was not on
    ///   the board at that version; nothing is changed then.
    package mutating func restore(_ scope: RestoreScope, asIn past: ProjectDocument) throws(DocumentError) {
        switch scope {
        case .project:
            try restoreFields(of: .root, kind: .project, asIn: past)
            try restoreChildren(of: .root, asIn: past) { editor, scene, index throws(DocumentError) in
                try editor.restoreScene(scene, at: index, asIn: past)
            }
        case .scene(let scene):
            guard past.kind(of: scene) == .scene, past.isVisible(scene) else {
                throw DocumentError(.notFound, "that scene was not on the board at that version")
            }
            try restoreScene(scene, at: past.scenes.firstIndex(of: scene)!, asIn: past)
        case .shot(let shot):
            guard past.kind(of: shot) == .shot, past.isVisible(shot), let scene = past.container(of: shot) else {
                throw DocumentError(.notFound, "that shot was not on the board at that version")
            }
            if !isVisible(scene) { try restore(scene) }
            try restoreShot(shot, in: scene, at: past.shots(in: scene).firstIndex(of: shot)!, asIn: past)
        }
    }

    private mutating func restoreScene(_ scene: OpID, at index: Int, asIn past: ProjectDocument) throws(DocumentError) {
        try putBack(scene, in: .root, at: index)
        try restoreFields(of: scene, kind: .scene, asIn: past)
        try restoreChildren(of: scene, asIn: past) { editor, shot, index throws(DocumentError) in
            try editor.restoreShot(shot, in: scene, at: index, asIn: past)
        }
    }

    private mutating func restoreShot(_ shot: OpID, in scene: OpID, at index: Int, asIn past: ProjectDocument) throws(DocumentError) {
        try putBack(shot, in: scene, at: index)
        try restoreFields(of: shot, kind: .shot, asIn: past)
        try restoreChildren(of: shot, asIn: past) { editor, layer, index throws(DocumentError) in
            try editor.putBack(layer, in: shot, at: index)
            try editor.restoreFields(of: layer, kind: .layer, asIn: past)
            try editor.restoreStrokes(of: layer, asIn: past)
        }
    }

    /// Brings the children of `container` back to the past's: each past
    /// child restored by `body` (in order), then the children shown now that
    /// were not there put back where they were (if that place is shown) or
    /// deleted, then the order made the past's.
    private mutating func restoreChildren(
        of container: OpID, asIn past: ProjectDocument,
        _ body: (inout ProjectEditor, OpID, Int) throws(DocumentError) -> Void
    ) throws(DocumentError) {
        let wanted = past.isVisible(container) || container == .root ? pastChildren(of: container, in: past) : []
        for (index, child) in wanted.enumerated() { try body(&self, child, index) }
        let kept = Set(wanted)
        for child in state.children(of: container) where !kept.contains(child) {
            if past.isVisible(child), let home = past.container(of: child), home != container, isVisible(home) {
                let siblings = pastChildren(of: home, in: past)
                try move(child, to: min(siblings.firstIndex(of: child) ?? 0, state.children(of: home).count), in: home)
            } else {
                try delete(child)
            }
        }
        for (index, child) in wanted.enumerated() where state.children(of: container).firstIndex(of: child) != index {
            try move(child, to: index)
        }
    }

    private func pastChildren(of container: OpID, in past: ProjectDocument) -> [OpID] {
        switch past.kind(of: container) {
        case .project?: past.scenes
        case .scene?: past.shots(in: container)
        case .shot?: past.layers(in: container)
        default: []
        }
    }

    /// Shows `object` in `container` (restoring it, moving it in).
    private mutating func putBack(_ object: OpID, in container: OpID, at index: Int) throws(DocumentError) {
        if state.object(object)?.deleted.value == true { try restore(object) }
        if self.container(of: object) != container {
            try move(object, to: min(index, state.children(of: container).count), in: container)
        }
    }

    private mutating func restoreFields(of object: OpID, kind: ObjectKind, asIn past: ProjectDocument) throws(DocumentError) {
        for key in kind.fieldKeys.sorted(by: { $0.rawValue < $1.rawValue }) where key != .deletedAt {
            let was = past.field(key, of: object)
            if field(key, of: object) != was { try set(key, to: was, on: object) }
        }
    }

    private mutating func restoreStrokes(of layer: OpID, asIn past: ProjectDocument) throws(DocumentError) {
        let wanted = past.strokes(in: layer)
        for key in wanted {
            guard let value = past.stroke(key, in: layer) else { continue }
            if stroke(key, in: layer) != value { try replaceStroke(key, in: layer, with: value) }
        }
        let kept = Set(wanted)
        let shown = state.strokeMap(of: layer).compactMap { $0.value.isErased ? nil : $0.key }.sorted()
        for key in shown where !kept.contains(key) { try eraseStroke(key, in: layer) }
    }
}
