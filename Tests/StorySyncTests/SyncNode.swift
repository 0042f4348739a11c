import Foundation
import Logging
import NIOCore
import NIOPosix
import StoryCore
import StoryIdentity
import StoryStore
import StoryTLS
import StoryTestSupport
import Synchronization
import Testing

@testable import StorySync

/// A daemon's sync stack for tests: a store in a temporary directory, an
/// identity and a peer manager listening on 127.0.0.1.
final class SyncNode: @unchecked Sendable {
    static let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)

    let name: String
    /// The name its log lines carry: the test's name for it and its short peer id.
    let logName: String
    let directory: String
    let identity: Identity
    let store: Store
    /// Images' and sounds' bytes, moved by the manager's blob exchange.
    let blobs: BlobStore
    private let exchangeConfiguration: BlobExchangeConfiguration
    private(set) var manager: PeerManager
    /// Local discovery on loopback, when the node was made with a discovery port.
    let discovery: LocalDiscovery?
    private var task: Task<Void, any Error>?
    private var discoveryTask: Task<Void, Never>?
    private(set) var port = 0

    /// - Parameter discoveryPort: runs local discovery on this UDP port (on loopback).
    init(
        _ name: String, storeOptions: StoreOptions = StoreOptions(), discoveryPort: Int? = nil,
        blobExchange: BlobExchangeConfiguration = BlobExchangeConfiguration(),
        configure: (inout SyncConfiguration) -> Void = { _ in }
    ) async throws {
        self.name = name
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("storyteller-sync-\(name)-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        identity = try Identity.loadOrCreate(in: directory + "/identity")
        let logName = "\(name)@\(identity.peerID.short)"
        self.logName = logName
        store = try Store(path: directory + "/store.db", identity: try identity.signingIdentity, options: storeOptions)
        blobs = try BlobStore(directory: directory + "/blobs")
        exchangeConfiguration = blobExchange
        var configuration = SyncConfiguration(name: name)
        configuration.backoffBase = .milliseconds(50)
        configuration.backoffMaximum = .milliseconds(400)
        configure(&configuration)
        self.configuration = configuration
        let peerID = identity.peerID
        discovery = discoveryPort.map { port in
            var settings = DiscoveryConfiguration()
            settings.port = port
            return LocalDiscovery(peerID: peerID, configuration: settings, group: SyncNode.group, logger: SyncNode.logger(logName))
        }
        manager = try PeerManager(
            store: store, identity: identity, configuration: configuration, group: Self.group, discovery: discovery,
            blobExchange: BlobExchange(blobs: blobs, store: store, configuration: blobExchange, logger: Self.logger(logName)),
            logger: Self.logger(logName))
        blobEvents = Task { [store, manager] in
            for await event in await store.events(lossless: true) {
                if case .blobsReferenced = event { await manager.blobExchange?.documentsChanged() }
            }
        }
    }

    /// Tells the blob exchange when documents reference new blobs (the daemon's `BlobService`).
    private var blobEvents: Task<Void, Never>?

    private let configuration: SyncConfiguration

    /// Logs at debug level into `RecentLogs` (shown when `eventually` times
    /// out), and to the terminal too with STORYTELLER_TEST_VERBOSE=1.
    static func logger(_ name: String) -> Logger {
        let verbose = ProcessInfo.processInfo.environment["STORYTELLER_TEST_VERBOSE"] == "1"
        var logger = Logger(label: "sync-test.\(name)") { label -> any LogHandler in
            verbose
                ? MultiplexLogHandler([RecentLogs.Handler(label: label), StreamLogHandler.standardError(label: label)])
                : RecentLogs.Handler(label: label)
        }
        logger.logLevel = .debug
        return logger
    }

    var peerID: String { identity.peerID.description }

    /// Starts listening (on the previous port after a restart, unless
    /// `onAnotherPort`: a machine that moved).
    func start(onAnotherPort: Bool = false) async throws {
        let manager = self.manager
        let port = onAnotherPort ? 0 : self.port
        task = Task { try await manager.run(host: "127.0.0.1", port: port) }
        try await eventually("\(name) listens") { await manager.listeningPort != nil }
        self.port = await manager.listeningPort!
        if let discovery, discoveryTask == nil {
            let port = self.port
            discoveryTask = Task { await discovery.run(announcing: port, listenHost: "127.0.0.1") }
        }
    }

    /// Stops gracefully (Goodbye to peers), or abruptly (connections just drop).
    func stop(gracefully: Bool = true) async {
        discoveryTask?.cancel()
        await discoveryTask?.value
        discoveryTask = nil
        if gracefully { await manager.shutdown() }
        task?.cancel()
        _ = await task?.result
        task = nil
        if !gracefully { await manager.shutdown(timeout: .zero) }
        // A new manager for a later start (a stopped one does not restart).
        manager = try! PeerManager(
            store: store, identity: identity, configuration: configuration, group: Self.group, discovery: discovery,
            blobExchange: BlobExchange(blobs: blobs, store: store, configuration: exchangeConfiguration, logger: Self.logger(logName)),
            logger: Self.logger(logName))
        blobEvents?.cancel()
        blobEvents = Task { [store, manager] in
            for await event in await store.events(lossless: true) {
                if case .blobsReferenced = event { await manager.blobExchange?.documentsChanged() }
            }
        }
    }

    /// Makes `other` a configured peer that this node dials.
    func pair(with other: SyncNode) async throws {
        try await store.addPeer(other.identity.peerID, name: other.name, address: "127.0.0.1:\(other.port)", at: 1)
    }

    func remove() {
        blobEvents?.cancel()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// `eventually` with the last log lines of `nodes` when it times out
/// (tests run in parallel: all nodes' lines, when none are named).
func eventually(
    _ what: String, timeout: Duration = .seconds(60), nodes: [SyncNode] = [], sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws {
    try await StoryTestSupport.eventually(
        what, timeout: timeout,
        context: {
            let lines = RecentLogs.lines(of: nodes.isEmpty ? nil : Set(nodes.map { "sync-test.\($0.logName)" }))
            let whose = nodes.isEmpty ? "all nodes" : nodes.map(\.logName).joined(separator: ", ")
            return "the last sync logs of \(whose):\n\(lines.suffix(400).joined(separator: "\n"))"
        }, sourceLocation: sourceLocation, condition)
}

/// The last lines every test node logged (tests run in parallel, so they
/// are interleaved; each line names its node and the time).
enum RecentLogs {
    private static let buffer = Mutex<(lines: [(label: String, line: String)], next: Int)>(([], 0))
    private static let capacity = 20_000

    static func append(_ line: String, label: String) {
        let line = (label, line)
        buffer.withLock { state in
            if state.lines.count < capacity {
                state.lines.append(line)
            } else {
                state.lines[state.next] = line
            }
            state.next = (state.next + 1) % capacity
        }
    }

    /// The lines kept, oldest first: those of the loggers labelled `labels`, or all.
    static func lines(of labels: Set<String>? = nil) -> [String] {
        let all = buffer.withLock { state in
            state.lines.count < capacity ? state.lines : Array(state.lines[state.next...] + state.lines[..<state.next])
        }
        return all.filter { labels?.contains($0.label) ?? true }.map(\.line)
    }

    struct Handler: LogHandler {
        let label: String
        var logLevel: Logger.Level = .debug
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let time = Date().formatted(.iso8601.time(includingFractionalSeconds: true))
            RecentLogs.append("\(time) \(event.level) \(label): \(event.message)", label: label)
        }
    }
}

/// A project with a layer, created in a node's store.
func makeSharedProject(on node: SyncNode, with peers: [SyncNode], mode: ShareMode = .readWrite) async throws -> (DocumentID, OpID) {
    let id = try await node.store.createDocument(kind: .project, name: "Night Train", at: 1)
    let layer = try await node.store.editProject(id, at: 2) { editor in
        try editor.set(.title, to: .string("Night Train"))
        let scene = try editor.insertScene(at: 0)
        let shot = try editor.insertShot(in: scene, at: 0)
        return try editor.insertLayer(in: shot, at: 0)
    }.value
    for peer in peers { try await node.store.share(id, with: peer.identity.peerID, role: mode.role, at: 3) }
    return (id, layer)
}

func stroke(_ seed: Int, count: Int = 40) -> [Point] {
    (0..<count).map { Point(x: Double($0) / Double(count), y: Double(seed % 89) / 89, pressure: 0.5) }
}

/// Whether two nodes hold the same version of a document.
func inSync(_ a: SyncNode, _ b: SyncNode, _ id: DocumentID) async -> Bool {
    guard let va = try? await a.store.version(of: id), let vb = try? await b.store.version(of: id) else { return false }
    return va == vb
}
