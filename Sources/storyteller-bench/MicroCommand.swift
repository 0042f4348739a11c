import ArgumentParser
import Foundation
import StoryCore
import StoryIdentity

/// `storyteller-bench micro`: the cost of each step of the hot paths, on
/// synthetic 80-point strokes (the traces' mean), to find where time goes.
struct MicroCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "micro", abstract: "Time the codec and document hot paths in isolation.")

    @Option(help: "Strokes per measurement.")
    var strokes = 50_000

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() throws {
        var random = SystemRandomNumberGenerator()
        let strokePoints: [[Point]] = (0..<strokes).map { _ in
            var x = Double.random(in: 0.2...0.8, using: &random)
            var y = Double.random(in: 0.2...0.8, using: &random)
            var heading = Double.random(in: 0...6.28, using: &random)
            return (0..<80).map { index in
                heading += Double.random(in: -0.05...0.05, using: &random)
                x = min(max(x + 0.004 * cos(heading), 0), 1)
                y = min(max(y + 0.004 * sin(heading), 0), 1)
                return Point(x: x, y: y, pressure: 0.5 + 0.3 * sin(Double(index) / 10))
            }
        }
        var results: [String: Double] = [:]

        var blobs: [PointsBlob] = []
        blobs.reserveCapacity(strokes)
        let encode = Measure.seconds { for points in strokePoints { blobs.append(PointsBlob(encoding: points)) } }
        results["points_encode_ns_per_stroke"] = 1e9 * encode / Double(strokes)
        results["points_bytes_per_point"] = Double(blobs.reduce(0) { $0 + $1.bytes.count }) / Double(strokes * 80)

        let validate = try Measure.seconds { for blob in blobs { _ = try PointsBlob(validating: blob.bytes) } }
        results["points_validate_ns_per_stroke"] = 1e9 * validate / Double(strokes)
        var decodedPoints = 0
        let decodePoints = Measure.seconds { for blob in blobs { decodedPoints += blob.points().count } }
        results["points_decode_ns_per_point"] = 1e9 * decodePoints / Double(decodedPoints)

        // A document with one layer, strokes added locally (the edit path).
        let documentID = DocumentID(high: 1, low: 2)
        var author = ProjectDocument(id: documentID, replica: ReplicaID(1))
        let layer = try author.edit(at: 0) { editor in
            try editor.insertLayer(in: try editor.insertShot(in: try editor.insertScene(at: 0), at: 0), at: 0)
        }.value
        let brush = Brush()
        let add = try Measure.seconds {
            for (index, points) in strokePoints.enumerated() {
                try author.edit(at: Int64(index)) { try $0.addStroke(to: layer, brush: brush, points: points) }
            }
        }
        results["stroke_add_us"] = 1e6 * add / Double(strokes)

        guard case .changes(var changes) = author.changes(since: VersionVector()) else { throw ExitCode(1) }
        let batch = ChangeBatch.encode(changes)
        results["wire_bytes_per_stroke_change"] = Double(batch.count) / Double(changes.count)
        var decoded: [(EncodedChange, Change)] = []
        let decode = try Measure.seconds { decoded = try ChangeBatch.decode(batch[...]) }
        results["change_decode_us"] = 1e6 * decode / Double(changes.count)

        var receiver = ProjectDocument(id: documentID, replica: ReplicaID(2))
        let apply = try Measure.seconds { try receiver.apply(decoded) }
        results["change_apply_us"] = 1e6 * apply / Double(changes.count)
        // Live heap a stroke holds in the document that received it (and below, in the one that drew it).
        decoded = []
        for (part, bytes) in Self.heapPerStroke(freeing: &receiver, strokes: strokes) { results["heap_received_\(part)_bytes_per_stroke"] = bytes }

        // The same strokes in a signed document (its owner draws), caught up by
        // another member as a relay sends them: 512 KiB batches, each run ending
        // on a signed change, every change hashed into its chain on arrival.
        let ownerIdentity = try Identity.generate(commonName: "micro owner").signingIdentity
        let memberIdentity = try Identity.generate(commonName: "micro member").signingIdentity
        var signedAuthor = try ProjectDocument.found(by: LocalAuthor(identity: ownerIdentity, nonce: 1)!, at: 0).document
        try signedAuthor.setAccess(.reader, for: memberIdentity.peer, at: 0)
        let signedLayer = try signedAuthor.edit(at: 0) { editor in
            try editor.insertLayer(in: try editor.insertShot(in: try editor.insertScene(at: 0), at: 0), at: 0)
        }.value
        let signedAdd = try Measure.seconds {
            for (index, points) in strokePoints.enumerated() {
                try signedAuthor.edit(at: Int64(index)) { try $0.addStroke(to: signedLayer, brush: brush, points: points) }
            }
        }
        results["signed_stroke_add_us"] = 1e6 * signedAdd / Double(strokes)
        guard case .changes(let signedChanges) = signedAuthor.changes(since: VersionVector()) else { throw ExitCode(1) }
        let signedBatches = ChangeBatch.split(signedChanges, targetBytes: 512 << 10).map { ChangeBatch.encode($0) }
        results["signed_catch_up_bytes_per_stroke_change"] = Double(signedBatches.reduce(0) { $0 + $1.count }) / Double(signedChanges.count)
        results["signed_live_bytes_per_stroke_change"] = Double(ChangeBatch.encode([signedChanges.last!]).count)
        var signedDecoded: [[(EncodedChange, Change)]] = []
        let signedDecode = try Measure.seconds { signedDecoded = try signedBatches.map { try ChangeBatch.decode($0[...]) } }
        results["signed_change_decode_us"] = 1e6 * signedDecode / Double(signedChanges.count)
        var member = ProjectDocument(id: signedAuthor.id, author: LocalAuthor(identity: memberIdentity, nonce: 1)!)
        let signedApply = try Measure.seconds { for batch in signedDecoded { try member.apply(batch) } }
        results["signed_change_apply_us"] = 1e6 * signedApply / Double(signedChanges.count)
        guard member.view == signedAuthor.view else { throw ValidationError("the signed copy differs") }

        let snapshot = author.snapshot()
        let load = try Measure.seconds { _ = try ProjectDocument(snapshot: snapshot, replica: ReplicaID(3)) }
        results["snapshot_load_ms"] = 1e3 * load
        var merged = ProjectDocument(id: documentID, replica: ReplicaID(4))
        let merge = try Measure.seconds {
            try merged.merge(snapshot: snapshot)
            try merged.merge(snapshot: snapshot)
        }
        results["snapshot_merge_twice_ms"] = 1e3 * merge

        changes = []
        for (part, bytes) in Self.heapPerStroke(freeing: &author, strokes: strokes) { results["heap_drawn_\(part)_bytes_per_stroke"] = bytes }

        if json {
            let data = try JSONSerialization.data(withJSONObject: results.mapValues { rounded($0, 3) }, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            for key in results.keys.sorted() { print("\(key): \(rounded(results[key]!, 3))") }
        }
    }

    /// The live heap `document` held per stroke: its change log, then the rest
    /// (it is replaced by an empty document).
    private static func heapPerStroke(freeing document: inout ProjectDocument, strokes: Int) -> [(String, Double)] {
        var heap = Measure.heapInUseMB
        document.keepsChangeLog = false
        let log = (heap - Measure.heapInUseMB) * 1_048_576 / Double(strokes)
        heap = Measure.heapInUseMB
        document = ProjectDocument(id: document.id, replica: document.replica)
        return [("log", log), ("state", (heap - Measure.heapInUseMB) * 1_048_576 / Double(strokes))]
    }
}
