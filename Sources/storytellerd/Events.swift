import Foundation
import StoryCore
import StoryStore
import StorySync

/// One line of the event stream (`GET /v1/events`): document changes, new
/// documents, peers connecting, disconnecting and waiting for acceptance.
struct EventBody: Encodable {
    /// `hello`, `document.changed`, `library.changed`, `document.created`,
    /// `peer.connected`, `peer.disconnected`, `peer.pending`, `peers.changed`, `shares.changed`.
    let type: String
    /// Milliseconds since the epoch.
    let time: Int64
    var document: String? = nil
    var kind: String? = nil
    /// For changes: `local`, `peer` or `snapshot`.
    var origin: String? = nil
    var peer: String? = nil
    var changes: Int? = nil
    var address: String? = nil
}

/// The event stream of the control API, as NDJSON (one object per line) or
/// server-sent events (`event:` + `data:` lines).
enum EventStream {
    static func make(store: Store, manager: PeerManager, library: DocumentID, project: DocumentID?, sse: Bool) async -> AsyncStream<Data> {
        let events = await store.events()
        let initial = Set(await manager.status().filter(\.isEstablished).map(\.peer))
        let (stream, continuation) = AsyncStream<Data>.makeStream(bufferingPolicy: .bufferingNewest(4_096))
        let send: @Sendable (EventBody) -> Void = { event in
            guard let json = try? ControlJSON.encoder.encode(event) else { return }
            if sse {
                continuation.yield(Data("event: \(event.type)\ndata: ".utf8) + json + Data("\n\n".utf8))
            } else {
                continuation.yield(json + Data("\n".utf8))
            }
        }
        send(EventBody(type: "hello", time: millisecondsSinceEpoch(), document: project?.description))
        let forward = Task {
            for await event in events {
                if let body = body(of: event, library: library), project == nil || body.document == project?.description {
                    send(body)
                }
            }
            continuation.finish()
        }
        // Sessions are the peer manager's, not the store's: watched by polling.
        let peers = Task {
            var connected = initial
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                let now = Set(await manager.status().filter(\.isEstablished).map(\.peer))
                guard project == nil else { continue }
                for peer in now.subtracting(connected).sorted() {
                    send(EventBody(type: "peer.connected", time: millisecondsSinceEpoch(), peer: peer.description))
                }
                for peer in connected.subtracting(now).sorted() {
                    send(EventBody(type: "peer.disconnected", time: millisecondsSinceEpoch(), peer: peer.description))
                }
                connected = now
            }
        }
        continuation.onTermination = { _ in
            forward.cancel()
            peers.cancel()
        }
        return stream
    }

    private static func body(of event: StoreEvent, library: DocumentID) -> EventBody? {
        let now = millisecondsSinceEpoch()
        switch event {
        case .documentChanged(let id, let origin, let count):
            var body = EventBody(type: id == library ? "library.changed" : "document.changed", time: now, document: id.description, changes: count)
            switch origin {
            case .local: body.origin = "local"
            case .peer(let peer):
                body.origin = "peer"
                body.peer = peer
            case .snapshot: body.origin = "snapshot"
            }
            return body
        case .documentCreated(let id, let kind):
            return EventBody(type: "document.created", time: now, document: id.description, kind: kind.description)
        case .peerPending(let peer, let address):
            return EventBody(type: "peer.pending", time: now, peer: peer, address: address)
        case .peersChanged:
            return EventBody(type: "peers.changed", time: now)
        case .accessChanged(let id):
            return EventBody(type: "shares.changed", time: now, document: id.description)
        }
    }
}

/// A one-line account of a change for `history`: "drew 2 strokes, moved 1 shot".
enum ChangeSummary {
    static func describe(_ change: Change, in document: ProjectDocument) -> String {
        var counts: [String: Int] = [:]
        var order: [String] = []
        var fields: [String] = []
        var extra: [String] = []
        var inserted: [OpID: ObjectKind] = [:]
        var counted: Set<String> = []
        /// Counts each object once per verb (a restyle and a move of one stroke change 1 stroke).
        func note(_ verb: String, _ noun: String, _ object: OpID? = nil) {
            let key = "\(verb) \(noun)"
            if let object, !counted.insert("\(key) \(object)").inserted { return }
            if counts[key] == nil { order.append(key) }
            counts[key, default: 0] += 1
        }
        func kind(_ id: OpID) -> String {
            if id == .root { return "project" }
            return (inserted[id] ?? document.kind(of: id)).map { "\($0)" } ?? "object"
        }
        for (index, operation) in change.operations.enumerated() {
            switch operation {
            case .insert(let objectKind, _, _):
                inserted[change.opID(at: index)] = objectKind
                note("added", "\(objectKind)")
            case .insertProjectEntry: note("added", "project entry")
            case .move(let object, _, _), .reorder(let object, _, _): note("moved", kind(object), object)
            case .setDeleted(let object, let isDeleted): note(isDeleted ? "deleted" : "restored", kind(object), object)
            case .addStroke: note("drew", "stroke")
            case .putStroke(_, let key, _): note("changed", "stroke", key)
            case .eraseStroke(_, let key): note("erased", "stroke", key)
            case .purge(let nodes): for _ in nodes { note("purged", "node") }
            case .genesis: extra.append("founded it")
            case .setAccess(let peer, let role):
                extra.append(role == .none ? "took \(peer.short)'s rights" : "made \(peer.short) \(role == .editor ? "an editor" : "a reader")")
            case .setField(let object, let key, _):
                // Fields set on what the same change added are part of adding it.
                if inserted[object] == nil, !fields.contains("\(key)") { fields.append("\(key)") }
            }
        }
        var parts = order.map { key -> String in
            let count = counts[key] ?? 0
            return "\(key.split(separator: " ", maxSplits: 1)[0]) \(count) \(key.split(separator: " ", maxSplits: 1)[1])\(count == 1 ? "" : "s")"
        }
        if !fields.isEmpty { parts.append("set " + fields.joined(separator: ", ")) }
        parts += extra
        return parts.isEmpty ? "no visible change" : parts.joined(separator: ", ")
    }
}
