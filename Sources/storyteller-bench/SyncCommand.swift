import ArgumentParser
import Foundation
import Logging
import NIOCore
import NIOPosix
import StoryCore
import StoryIdentity
import StoryStore
import StorySync
import StoryTLS
import Synchronization

/// `storyteller-bench sync`: peers over real TLS on 127.0.0.1. Measures
/// edit-to-visible latency of single stroke edits (two peers, and through a
/// relay with three), bytes on the wire per 80-point stroke, and the initial
/// sync of a trace's whole document.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync", abstract: "Measure live sync latency, bytes per edit and initial sync over TLS on loopback.")

    @Option(help: "Single stroke edits to time.")
    var edits = 1000

    @Option(help: "A trace whose whole document is synced to an empty peer (initial sync).")
    var trace: String?

    @Flag(help: "Catch the empty peer up change by change, not with the snapshot and the changes after it.")
    var changesOnly = false

    @Option(
        help:
            "History retention of the trace's source, in days, as the daemon's `history-retention` (default 30 there): its snapshot then leaves the kept changes' points in the log, and a far-behind peer's snapshot is encoded afresh. 0: none."
    )
    var retentionDays = 0

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        var result: [String: Any] = ["edits": edits]
        let phase = PhaseWatchdog()

        // Two peers, then a third reached only through the second.
        phase.enter("starting peers a, b and c")
        let a = try await Node.start("a", group: group)
        let b = try await Node.start("b", group: group)
        let c = try await Node.start("c", group: group)
        defer { for node in [a, b, c] { node.remove() } }
        phase.enter("pairing a, b and c")
        try await Node.pair(a, b)
        try await Node.pair(b, c)
        phase.enter("sharing the latency project")
        let id = try await a.store.createDocument(kind: .project, name: "Latency", at: 1)
        let layer = try await a.store.editProject(id, at: 2) { editor in
            try editor.insertLayer(in: try editor.insertShot(in: try editor.insertScene(at: 0), at: 0), at: 0)
        }.value
        try await a.store.share(id, with: b.identity.peerID, role: .editor, at: 3)
        try await waitUntil("b holds the shared project") { (try? await b.store.version(of: id)) == (try? await a.store.version(of: id)) }
        try await b.store.share(id, with: c.identity.peerID, role: .editor, at: 4)
        try await waitUntil("c holds the project b shared") { (try? await c.store.version(of: id)) == (try? await a.store.version(of: id)) }

        let points = (0..<80).map { index in
            Point(x: 0.2 + 0.006 * Double(index), y: 0.5 + 0.1 * sin(Double(index) / 8), pressure: 0.4 + 0.004 * Double(index))
        }
        phase.enter("timing edits")
        let bEvents = await b.store.events()
        let cEvents = await c.store.events()
        var toB: [Double] = []
        var toC: [Double] = []
        let bytesBefore = await a.manager.totalBytes
        var iteratorB = bEvents.makeAsyncIterator()
        var iteratorC = cEvents.makeAsyncIterator()
        for index in 0..<edits {
            let start = ContinuousClock.now
            // An edit that never arrives ends the run with what it waited for, not a hang.
            phase.enter("waiting for edit \(index) to reach b", giveUpAfter: .seconds(30))
            _ = try await a.store.editProject(id, at: Int64(10 + index)) { try $0.addStroke(to: layer, brush: Brush(), points: points) }
            while let event = await iteratorB.next() {
                if case .documentChanged(id, .peer, _) = event { break }
            }
            toB.append((ContinuousClock.now - start).seconds * 1000)
            phase.enter("waiting for edit \(index) to reach c", giveUpAfter: .seconds(30))
            while let event = await iteratorC.next() {
                if case .documentChanged(id, .peer, _) = event { break }
            }
            toC.append((ContinuousClock.now - start).seconds * 1000)
        }
        phase.enter("measuring the bytes sent")
        let bytesAfter = await a.manager.totalBytes
        result["latency_ms_p50"] = rounded(Measure.percentile(toB, 0.5), 3)
        result["latency_ms_p99"] = rounded(Measure.percentile(toB, 0.99), 3)
        result["latency_ms_max"] = rounded(toB.max() ?? 0, 3)
        result["relay_latency_ms_p50"] = rounded(Measure.percentile(toC, 0.5), 3)
        result["relay_latency_ms_p99"] = rounded(Measure.percentile(toC, 0.99), 3)
        // a sends each stroke to b and receives b's acknowledgement.
        result["wire_bytes_per_stroke_edit_sent"] = (bytesAfter.sent - bytesBefore.sent) / edits
        result["wire_bytes_per_stroke_edit_received"] = (bytesAfter.received - bytesBefore.received) / edits
        guard try await c.store.project(id).strokes(in: layer).count == edits else { throw ValidationError("c lacks strokes") }

        if let trace {
            phase.enter("replaying and storing the trace")
            let changesOnly = self.changesOnly
            let source = try await Node.start("source", group: group, retentionDays: retentionDays) { configuration in
                if changesOnly { configuration.snapshotCatchUpChanges = .max }
            }
            let target = try await Node.start("target", group: group)
            defer {
                source.remove()
                target.remove()
            }
            // Signed by the trace's replicas, with source and target members of the document.
            var replay = try TraceReplay(path: trace, members: [source.identity.peerID, target.identity.peerID])
            try replay.run()
            let changes = try replay.allChanges().map { ($0, try $0.decoded()) }
            let document = replay.document
            try await source.store.receiveDocument(document, kind: .project, name: "Trace", from: target.identity.peerID, at: 1)
            var start = 0
            while start < changes.count {
                let end = min(start + 2000, changes.count)
                try await source.store.apply(Array(changes[start..<end]), to: document)
                start = end
            }
            let expected = try await source.store.version(of: document)
            // As the daemon's maintenance does after 1,000 changes: a snapshot on disk (which compacts
            // the log: the target is not a configured peer yet). Change by change: the whole log, no snapshot.
            phase.enter("writing the source's snapshot")
            if !changesOnly { try await source.store.writeSnapshot(of: document, at: 2) }
            phase.enter("the initial sync")
            let before = await source.manager.totalBytes
            let started = ContinuousClock.now
            // Pairing starts the sync: the target is a member, so the source offers it and it takes it.
            try await Node.pair(source, target)
            try await waitUntil("the new peer holds the trace's document", timeout: .seconds(600)) {
                (try? await target.store.version(of: document)) == expected
            }
            let seconds = (ContinuousClock.now - started).seconds
            let after = await source.manager.totalBytes
            let wire = after.sent - before.sent
            result["initial_sync_trace"] = replay.header.name
            result["initial_sync_path"] = changesOnly ? "changes" : "snapshot and changes after it"
            result["initial_sync_source_retention_days"] = retentionDays
            result["initial_sync_changes"] = changes.count
            result["initial_sync_s"] = rounded(seconds, 3)
            result["initial_sync_wire_mb"] = rounded(Double(wire) / 1e6, 2)
            result["initial_sync_mb_per_s"] = rounded(Double(wire) / 1e6 / seconds, 2)
            phase.enter("checking the synced document")
            guard try await target.store.project(document).view == replay.converged.view else {
                throw ValidationError("the synced document differs")
            }
            phase.enter("stopping the source and the target")
            await source.stop()
            await target.stop()
        }
        phase.enter("stopping a, b and c")
        for node in [a, b, c] { await node.stop() }
        phase.enter("printing")
        if json {
            let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            for key in result.keys.sorted() { print("\(key): \(result[key]!)") }
        }
    }

    private func waitUntil(
        _ what: String, timeout: Duration = .seconds(30), _ condition: () async -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if await condition() { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw ValidationError("timed out after \(timeout) waiting until \(what)")
    }
}

/// A store, identity and peer manager in a temporary directory.
final class Node: Sendable {
    let directory: String
    let store: Store
    let identity: Identity
    let manager: PeerManager
    private let task: Task<Void, any Error>
    let port: Int

    var peerID: String { identity.peerID.description }

    private init(directory: String, store: Store, identity: Identity, manager: PeerManager, task: Task<Void, any Error>, port: Int) {
        self.directory = directory
        self.store = store
        self.identity = identity
        self.manager = manager
        self.task = task
        self.port = port
    }

    static func start(
        _ name: String, group: any EventLoopGroup, retentionDays: Int = 0, configure: (inout SyncConfiguration) -> Void = { _ in }
    ) async throws -> Node {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storyteller-bench-\(name)-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let identity = try Identity.loadOrCreate(in: directory + "/identity")
        var options = StoreOptions()
        options.historyRetention = Int64(retentionDays) * 86_400_000
        let store = try Store(path: directory + "/store.db", identity: try identity.signingIdentity, options: options)
        var logger = Logger(label: "bench.\(name)")
        // STORYTELLER_BENCH_LOG=debug (or info, …) shows what the peers do.
        logger.logLevel = ProcessInfo.processInfo.environment["STORYTELLER_BENCH_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .error
        var configuration = SyncConfiguration(name: name)
        configure(&configuration)
        let manager = try PeerManager(store: store, identity: identity, configuration: configuration, group: group, logger: logger)
        let task = Task { try await manager.run(host: "127.0.0.1", port: 0) }
        await manager.waitUntilListening()
        guard let port = await manager.listeningPort else { throw ValidationError("\(name) never listened") }
        return Node(directory: directory, store: store, identity: identity, manager: manager, task: task, port: port)
    }

    static func pair(_ x: Node, _ y: Node) async throws {
        try await x.store.addPeer(y.identity.peerID, name: "y", address: "127.0.0.1:\(y.port)", at: 1)
        try await y.store.addPeer(x.identity.peerID, name: "x", address: "127.0.0.1:\(x.port)", at: 1)
    }

    func stop() async {
        await manager.shutdown()
        task.cancel()
        _ = await task.result
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

/// Names what the benchmark is doing on standard error when one phase takes
/// over a minute, and ends the run when a phase with a limit passes it: two
/// runs of this benchmark stalled with every thread idle, in phases no
/// timeout covered. A thread of its own (not a task), so it reports even
/// when every task waits.
final class PhaseWatchdog: Sendable {
    private struct Phase {
        var name: String
        var since: ContinuousClock.Instant
        var limit: Duration?
        var reportedMinutes = 0
    }

    private let current = Mutex(Phase(name: "starting", since: .now, limit: nil))

    init() {
        // The thread holds the watchdog for the life of the process (the benchmark's).
        let thread = Thread { [self] in
            while true {
                Thread.sleep(forTimeInterval: 1)
                let (message, giveUp): (String?, Bool) = current.withLock { phase in
                    let elapsed = ContinuousClock.now - phase.since
                    if let limit = phase.limit, elapsed > limit {
                        return ("storyteller-bench sync: gave up \(phase.name) after \(Int(limit.seconds)) s\n", true)
                    }
                    let minutes = Int(elapsed.seconds / 60)
                    guard minutes > phase.reportedMinutes else { return (nil, false) }
                    phase.reportedMinutes = minutes
                    return ("storyteller-bench sync: still \(phase.name) after \(minutes) min\n", false)
                }
                if let message { FileHandle.standardError.write(Data(message.utf8)) }
                if giveUp { Foundation.exit(1) }
            }
        }
        thread.start()
    }

    /// Starts a phase; one that lasts longer than `limit` ends the run.
    func enter(_ name: String, giveUpAfter limit: Duration? = nil) {
        current.withLock { $0 = Phase(name: name, since: .now, limit: limit) }
    }
}
