import StoryCore

extension API {
    /// `GET /v1/identity`.
    package struct Identity: Codable, Sendable {
        package let peerID: String
        package let name: String
        package let certificatePEM: String

        package init(peerID: String, name: String, certificatePEM: String) {
            self.peerID = peerID
            self.name = name
            self.certificatePEM = certificatePEM
        }
    }

    /// A peer as `GET /v1/peers` lists it.
    package struct Peer: Codable, Sendable {
        package let id: String
        package let name: String?
        /// Where it is dialed first: the first of `addresses`.
        package let address: String?
        /// Where it is dialed, tried in this order (then where local discovery heard it).
        package let addresses: [String]
        /// `configured` or `pending`.
        package let state: String
        package let connected: Bool
        /// Sync with it is paused (`peers pause`).
        package let paused: Bool
        /// When it was added (milliseconds since 1970), and as ISO 8601 in `addedAt`.
        package let added: Int64
        package let addedAt: String
        /// When it was last connected (milliseconds since 1970), and as ISO 8601 in `lastSeenAt`.
        package let lastSeen: Int64?
        package let lastSeenAt: String?
        package let lastAddress: String?
        /// The name the peer gave itself in its hello (its `--name`), when connected now or last time
        /// (kept in the store across restarts).
        package let announcedName: String?
        /// The peer paused sync with this daemon: its last connection ended
        /// with its Goodbye saying so (never while connected).
        package let pausedByPeer: Bool
        /// Whether what it shares is taken without asking (else it waits in
        /// `GET /v1/shares/pending`): its `auto-accept` in the config, else
        /// `PATCH /v1/peers/{peer}`, else the `accept-shares` setting.
        package let autoAccept: Bool
        /// While connected: the other end's address, and whether this daemon dialed it (`out`) or it dialed in (`in`).
        package let connection: Connection?
        /// How many of its offers waiting for a user were dropped, oldest
        /// first, to keep at most 200 per peer (absent: none).
        package let offersDropped: Int?
        /// It answered last that it does not know this daemon yet: a user
        /// there must accept this machine (`storyteller peers accept`).
        package let waitingForAcceptance: Bool?
        /// Its last connection ended because the two speak different sync
        /// protocols: which side to upgrade, in words.
        package let upgrade: String?

        package struct Connection: Codable, Sendable {
            package let address: String
            /// `out` (this daemon dialed) or `in`.
            package let direction: String
            package let bytesSent: Int
            package let bytesReceived: Int
            /// Seconds since the peer last sent more than keepalives: "idle" from `idleAfterSeconds`.
            package let idleSeconds: Int

            /// A connection quiet this long is idle (`storyteller peers`).
            package static let idleAfterSeconds = 60

            package init(address: String, direction: String, bytesSent: Int, bytesReceived: Int, idleSeconds: Int = 0) {
                self.address = address
                self.direction = direction
                self.bytesSent = bytesSent
                self.bytesReceived = bytesReceived
                self.idleSeconds = idleSeconds
            }
        }

        package init(
            id: String, name: String?, address: String?, addresses: [String]? = nil, state: String, connected: Bool, paused: Bool,
            added: Int64, lastSeen: Int64?, lastAddress: String?, announcedName: String? = nil, connection: Connection? = nil,
            autoAccept: Bool = true, pausedByPeer: Bool = false, offersDropped: Int? = nil, waitingForAcceptance: Bool? = nil,
            upgrade: String? = nil
        ) {
            self.waitingForAcceptance = waitingForAcceptance
            self.upgrade = upgrade
            self.offersDropped = offersDropped
            self.pausedByPeer = pausedByPeer
            self.autoAccept = autoAccept
            self.id = id
            self.name = name
            self.address = address
            self.addresses = addresses ?? address.map { [$0] } ?? []
            self.state = state
            self.connected = connected
            self.paused = paused
            self.added = added
            self.lastSeen = lastSeen
            self.lastAddress = lastAddress
            self.addedAt = API.isoTime(milliseconds: added)
            self.lastSeenAt = lastSeen.map { API.isoTime(milliseconds: $0) }
            self.announcedName = announcedName
            self.connection = connection
        }
    }

    /// `POST /v1/peers`.
    package struct AddPeer: Codable, Sendable {
        package let id: String
        /// One address to dial it at (`HOST:PORT`).
        package let address: String?
        /// Addresses to dial it at, tried in turn (after `address`, if both are given).
        package let addresses: [String]?
        package let name: String?

        package init(id: String, address: String? = nil, addresses: [String]? = nil, name: String? = nil) {
            self.id = id
            self.address = address
            self.addresses = addresses
            self.name = name
        }

        /// Every address given, `address` first.
        package var allAddresses: [String] { (address.map { [$0] } ?? []) + (addresses ?? []) }
    }

    /// `GET /v1/peers/discovered`: what local discovery hears on the LAN.
    package struct Discovery: Codable, Sendable {
        /// Whether local discovery is on (the `discovery` setting).
        package let enabled: Bool
        /// Whether it listens and announces now (not while the daemon starts,
        /// nor when its port could not be opened: see `problem`).
        package let running: Bool
        /// Its UDP port (null when it is off).
        package let port: Int?
        /// What keeps it (or a part of it) from working.
        package let problem: String?
        /// The peers heard within the last 90 seconds, by id.
        package let peers: [DiscoveredPeer]
        /// Datagrams on the port that were not announcements (malformed or too large): ignored.
        package let ignoredPackets: Int

        /// The answer, as the daemon makes it.
        package init(enabled: Bool, running: Bool, port: Int?, problem: String?, peers: [DiscoveredPeer], ignoredPackets: Int) {
            self.enabled = enabled
            self.running = running
            self.port = port
            self.problem = problem
            self.peers = peers
            self.ignoredPackets = ignoredPackets
        }
    }

    /// A peer local discovery heard.
    package struct DiscoveredPeer: Codable, Sendable {
        /// Its peer id, as announced (the TLS handshake checks it when it is dialed).
        package let id: String
        /// The id's first group, as listings show it.
        package let shortID: String
        /// `HOST:PORT`s it was heard from (the packets' sources), most recent first.
        package let addresses: [String]
        /// When it was last heard (milliseconds since 1970), and as ISO 8601 in `lastSeenAt`.
        package let lastSeen: Int64
        package let lastSeenAt: String
        /// Whether it is a configured peer here (then it is dialed at these addresses).
        package let configured: Bool
        /// Its name here, when configured.
        package let name: String?
        /// Whether a session with it is established.
        package let connected: Bool

        /// A discovered peer; `shortID` and `lastSeenAt` are derived.
        package init(id: String, addresses: [String], lastSeen: Int64, configured: Bool, name: String?, connected: Bool) {
            self.id = id
            self.shortID = String(id.prefix(7))
            self.addresses = addresses
            self.lastSeen = lastSeen
            self.lastSeenAt = API.isoTime(milliseconds: lastSeen)
            self.configured = configured
            self.name = name
            self.connected = connected
        }
    }

    /// `POST /v1/peers/{id}/accept`: the address to dial, if any (its source
    /// address is an ephemeral port).
    package struct AcceptPeer: Codable, Sendable {
        package let address: String?
        package init(address: String? = nil) { self.address = address }
    }

    /// `{"removed": id}`.
    package struct Removed: Codable, Sendable {
        package let removed: String
        package init(removed: String) { self.removed = removed }
    }

    /// `GET /v1/status`.
    package struct Status: Codable, Sendable {
        package let peerID: String
        package let name: String
        package let uptimeSeconds: Int
        /// Documents in the store: the library and the projects.
        package let documents: Int
        /// Projects not deleted.
        package let projects: Int
        /// The TCP port peers connect to (null until the listener is up).
        package let listenPort: Int?
        package let peersConnected: Int
        package let bytesSent: Int
        package let bytesReceived: Int
        /// Per document: how many changes it holds and, per peer it is shared
        /// with, how many of them that peer has not acknowledged yet.
        package let sync: [DocumentSync]
        /// Text fields whose concurrent writes are still listed (`conflicts`),
        /// across the projects not in the trash.
        package let conflicts: Int
        /// The projects holding them.
        package let conflictedProjects: Int

        package init(
            peerID: String, name: String, uptimeSeconds: Int, documents: Int, projects: Int, listenPort: Int?, peersConnected: Int,
            bytesSent: Int, bytesReceived: Int, sync: [DocumentSync], conflicts: Int = 0, conflictedProjects: Int = 0
        ) {
            self.conflicts = conflicts
            self.conflictedProjects = conflictedProjects
            self.peerID = peerID
            self.name = name
            self.uptimeSeconds = uptimeSeconds
            self.documents = documents
            self.projects = projects
            self.listenPort = listenPort
            self.peersConnected = peersConnected
            self.bytesSent = bytesSent
            self.bytesReceived = bytesReceived
            self.sync = sync
        }
    }

    package struct DocumentSync: Codable, Sendable {
        package let id: String
        /// `project` or `library`.
        package let kind: String
        package let name: String?
        /// Changes known here (the sum of the version vector).
        package let changes: UInt64
        /// True for a project in the trash here (it still syncs, so a restore
        /// made anywhere arrives); absent otherwise.
        package let deleted: Bool?
        package let peers: [PeerSync]

        package init(id: String, kind: String, name: String?, changes: UInt64, deleted: Bool? = nil, peers: [PeerSync]) {
            self.id = id
            self.kind = kind
            self.name = name
            self.changes = changes
            self.deleted = deleted
            self.peers = peers
        }
    }

    package struct PeerSync: Codable, Sendable {
        package let peer: String
        /// `read-write` or `read-only`.
        package let mode: String
        /// Its role in the document's access list: owner, editor or reader.
        package let role: String
        package let connected: Bool
        /// Changes known here that the peer has not acknowledged (null: it never acknowledged any).
        package let behind: UInt64?
        /// Changes the peer has (as it advertised them) that are not here yet:
        /// what is still to be received (null: not connected, so unknown).
        package let ahead: UInt64?

        package init(peer: String, mode: String, role: String, connected: Bool, behind: UInt64?, ahead: UInt64? = nil) {
            self.peer = peer
            self.mode = mode
            self.role = role
            self.connected = connected
            self.behind = behind
            self.ahead = ahead
        }
    }

    /// `PATCH /v1/peers/{peer}`: settings of a configured peer.
    package struct PeerSettings: Codable, Sendable {
        /// true or false; null goes back to the `accept-shares` setting.
        package let autoAccept: Bool?
        package let name: String?
        /// Where to dial it from now on, tried in turn (replacing the ones it had).
        package let addresses: [String]?

        /// `setsAutoAccept` false leaves `autoAccept` out of the request (it stays as it is).
        package init(autoAccept: Bool?, name: String? = nil, addresses: [String]? = nil, setsAutoAccept: Bool = true) {
            self.autoAccept = autoAccept
            self.name = name
            self.addresses = addresses
            hasAutoAccept = setsAutoAccept
        }

        private enum CodingKeys: String, CodingKey { case autoAccept, name, addresses }

        /// `autoAccept` absent leaves it as it is; null clears it.
        package var setsAutoAccept: Bool { hasAutoAccept }
        private var hasAutoAccept = false

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            hasAutoAccept = container.contains(.autoAccept)
            do {
                autoAccept = try container.decodeIfPresent(Bool.self, forKey: .autoAccept)
            } catch {
                throw DecodingError.dataCorruptedError(forKey: .autoAccept, in: container, debugDescription: "must be true, false or null")
            }
            do {
                name = try container.decodeIfPresent(String.self, forKey: .name)
            } catch {
                throw DecodingError.dataCorruptedError(forKey: .name, in: container, debugDescription: "must be a string")
            }
            do {
                addresses = try container.decodeIfPresent([String].self, forKey: .addresses)
            } catch {
                throw DecodingError.dataCorruptedError(forKey: .addresses, in: container, debugDescription: "must be an array of HOST:PORT strings")
            }
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            if hasAutoAccept { try container.encode(autoAccept, forKey: .autoAccept) }
            try container.encodeIfPresent(name, forKey: .name)
            try container.encodeIfPresent(addresses, forKey: .addresses)
        }
    }

    /// A document a peer offered that waits for a user (`GET /v1/shares/pending`).
    package struct Offer: Codable, Sendable {
        package let document: String
        /// `project` or `library` (a library is a shared folder or a whole library).
        package let kind: String
        package let name: String?
        package let peer: String
        package let received: Int64
        package let receivedAt: String

        package init(document: String, kind: String, name: String?, peer: String, received: Int64) {
            self.document = document
            self.kind = kind
            self.name = name
            self.peer = peer
            self.received = received
            self.receivedAt = API.isoTime(milliseconds: received)
        }
    }
}

extension API {
    /// Whether `text` is a whole peer id (eight groups of seven base-32
    /// characters), as `storyteller id` prints it.
    package static func isPeerID(_ text: String) -> Bool { PeerID(text) != nil }
}
