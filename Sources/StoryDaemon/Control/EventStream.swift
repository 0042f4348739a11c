import Foundation
import StoryAPI
import StoryCore
import StoryStore
import StorySync

/// The event stream of the control API, as NDJSON (one object per line) or
/// server-sent events (`event:` + `data:` lines).
enum EventStream {
    /// The stream of one client, and what ends it (at shutdown).
    static func make(
        store: Store, manager: PeerManager, library: DocumentID, project: DocumentID?, sse: Bool, clock: WallClock
    ) async -> (stream: AsyncStream<Data>, finish: @Sendable () -> Void) {
        // Subscribed before anything is sent, so nothing falls between.
        let changes = await store.events()
        let peers = manager.events()
        let (stream, continuation) = AsyncStream<Data>.makeStream(bufferingPolicy: .bufferingNewest(4_096))
        let send: @Sendable (API.Event) -> Void = { event in
            guard let json = try? API.encoder.encode(event) else { return }
            if sse {
                continuation.yield(Data("event: \(event.type)\ndata: ".utf8) + json + Data("\n\n".utf8))
            } else {
                continuation.yield(json + Data("\n".utf8))
            }
        }
        send(API.Event(type: "hello", time: clock.milliseconds, document: project?.description))
        let forwardChanges = Task {
            for await event in changes {
                if let body = body(of: event, library: library, now: clock.milliseconds), project == nil || body.document == project?.description {
                    send(body)
                }
            }
            continuation.finish()
        }
        // Sessions are the peer manager's: its events, as they happen. A
        // peer caught up with a project has every change this daemon has
        // (the edit made here is there).
        let forwardPeers = Task {
            for await event in peers {
                switch event {
                case .connected(let peer) where project == nil:
                    send(API.Event(type: "peer.connected", time: clock.milliseconds, peer: peer.description))
                case .disconnected(let peer) where project == nil:
                    send(API.Event(type: "peer.disconnected", time: clock.milliseconds, peer: peer.description))
                case .discovered(let peer, let address) where project == nil:
                    send(API.Event(type: "peer.discovered", time: clock.milliseconds, peer: peer.description, address: address))
                case .acknowledged(let peer, let document, caughtUp: true, _) where document != library && (project == nil || document == project):
                    send(API.Event(type: "peer.caughtUp", time: clock.milliseconds, document: document.description, peer: peer.description))
                default:
                    continue
                }
            }
        }
        // Blobs on their way here (images and sounds): on a project's stream,
        // those the project references.
        let transfers = manager.blobExchange?.events()
        let forwardMedia = Task {
            guard let transfers else { return }
            for await event in transfers {
                var body: API.Event
                let hash: BlobHash
                switch event {
                case .started(let blob, let peer, let bytes):
                    hash = blob
                    body = API.Event(type: "media.started", time: clock.milliseconds, peer: peer.description)
                    body.bytes = bytes
                case .progressed(let blob, let peer, let held, let total):
                    hash = blob
                    body = API.Event(type: "media.progressed", time: clock.milliseconds, peer: peer.description)
                    body.bytes = total
                    body.heldBytes = held
                case .completed(let blob, let peer, let bytes):
                    hash = blob
                    body = API.Event(type: "media.completed", time: clock.milliseconds, peer: peer.description)
                    body.bytes = bytes
                    body.heldBytes = bytes
                case .failed(let blob, let peer, let reason):
                    hash = blob
                    body = API.Event(type: "media.failed", time: clock.milliseconds, peer: peer.description)
                    body.reason = reason
                }
                body.blob = hash.description
                if let project {
                    guard (try? await store.blobReferences(of: project))?.contains(where: { $0.hash == hash }) == true else { continue }
                    body.document = project.description
                }
                send(body)
            }
        }
        continuation.onTermination = { _ in
            forwardChanges.cancel()
            forwardPeers.cancel()
            forwardMedia.cancel()
        }
        return (stream, { continuation.finish() })
    }

    private static func body(of event: StoreEvent, library: DocumentID, now: Int64) -> API.Event? {
        switch event {
        case .documentChanged(let id, let origin, let count):
            var body = API.Event(type: id == library ? "library.changed" : "document.changed", time: now, document: id.description, changes: count)
            switch origin {
            case .local: body.origin = "local"
            case .peer(let peer):
                body.origin = "peer"
                body.peer = peer.description
            case .snapshot: body.origin = "snapshot"
            }
            return body
        case .documentCreated(let id, let kind):
            return API.Event(type: "document.created", time: now, document: id.description, kind: kind.description)
        case .peerPending(let peer, let address):
            return API.Event(type: "peer.pending", time: now, peer: peer.description, address: address)
        case .peersChanged:
            return API.Event(type: "peers.changed", time: now)
        case .accessChanged(let id):
            return API.Event(type: "shares.changed", time: now, document: id.description)
        case .trashChanged(let id):
            return API.Event(type: "trash.changed", time: now, document: id.description)
        case .fieldsOverwritten(let id):
            return API.Event(type: "conflict.opened", time: now, document: id.description)
        case .blobsReferenced:
            return nil
        }
    }
}
