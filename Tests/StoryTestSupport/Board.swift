package import StoryCore

/// A project with scenes of shots of layers, for tests.
package struct Board {
    package static let documentID = DocumentID(high: 0xB0A2D, low: 1)
    package var doc: ProjectDocument
    package var scenes: [OpID] = []
    package var shots: [[OpID]] = []
    package var layers: [OpID: [OpID]] = [:]

    package init(replica: UInt64 = 1, scenes sceneCount: Int = 2, shots shotCount: Int = 3, layers layerCount: Int = 1) throws {
        doc = ProjectDocument(id: Board.documentID, replica: ReplicaID(replica))
        var scenes: [OpID] = []
        var shots: [[OpID]] = []
        var layers: [OpID: [OpID]] = [:]
        try doc.edit(at: 1000) { editor in
            for s in 0..<sceneCount {
                let scene = try editor.insertScene(at: s)
                try editor.set(.title, to: .string("Scene \(s + 1)"), on: scene)
                scenes.append(scene)
                var row: [OpID] = []
                for x in 0..<shotCount {
                    let shot = try editor.insertShot(in: scene, at: x)
                    row.append(shot)
                    layers[shot] = try (0..<layerCount).map { try editor.insertLayer(in: shot, at: $0) }
                }
                shots.append(row)
            }
        }
        self.scenes = scenes
        self.shots = shots
        self.layers = layers
    }

    /// A replica of this board on another replica id (via a snapshot).
    package func replica(_ id: UInt64) throws -> ProjectDocument {
        try ProjectDocument(snapshot: doc.snapshot(), replica: ReplicaID(id))
    }
}
