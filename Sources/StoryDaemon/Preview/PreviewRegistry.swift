import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import StoryAPI
import StoryCore
import Synchronization

/// The daemon's live previews: each a Hummingbird listener on 127.0.0.1 (an
/// ephemeral port, never another address) with a one-time token, serving
/// one project's slideshow. The registry is one of the daemon's services: the
/// listeners run as child tasks of its `run`, and end with it.
///
/// A preview lives while a client holds it (`GET /v1/previews/{id}/hold`,
/// a stream the CLI keeps open): it closes when that connection closes, on
/// `DELETE /v1/previews/{id}`, when nobody holds it within
/// `unheldLease` (`API.PreviewLease.unheldSeconds`) of its start, and at shutdown.
final class PreviewRegistry: Service, Sendable {
    /// A listener to run, handed from `open` to `run`.
    private struct Launch: Sendable {
        let id: String
        let group: ServiceGroup
        /// Ends when the preview is to close.
        let closing: AsyncStream<Void>
        /// Told the port once bound, or nil if the listener ends without binding.
        let bound: BoundPort
    }

    private struct Entry: Sendable {
        var preview: API.Preview
        let streams: PreviewStreams
        let closer: AsyncStream<Void>.Continuation
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var isShutDown = false
    }

    let source: SlideshowSource
    let unheldLease: Duration
    let logger: Logger
    private let state = Mutex(State())
    private let launches: AsyncStream<Launch>
    private let launcher: AsyncStream<Launch>.Continuation

    /// - Parameter source: where pages come from; the previews draw on a
    ///   render thread of their own (`source.renderer`), so a preview
    ///   redrawing panels as peers draw never holds up `render` or an export.
    /// - Parameter unheldLease: how long a preview nobody holds stays open.
    init(source: SlideshowSource, unheldLease: Duration = .seconds(API.PreviewLease.unheldSeconds), logger: Logger) {
        self.source = source
        self.unheldLease = unheldLease
        self.logger = logger
        (launches, launcher) = AsyncStream<Launch>.makeStream()
    }

    func run() async throws {
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                for await launch in launches {
                    group.addTask { [self] in await self.serve(launch) }
                }
            }
        } onGracefulShutdown: { [self] in
            let open = state.withLock { state in
                state.isShutDown = true
                return Array(state.entries.keys)
            }
            launcher.finish()
            for id in open { close(id) }
        }
    }

    /// Runs one listener until it is closed, closing it unheld after the lease.
    private func serve(_ launch: Launch) async {
        await withTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                for await _ in launch.closing {}
                guard !Task.isCancelled else { return }
                await launch.group.triggerGracefulShutdown()
            }
            tasks.addTask { [self] in
                try? await Task.sleep(for: unheldLease)
                guard !Task.isCancelled, state.withLock({ $0.entries[launch.id].map { !$0.preview.held } ?? false }) else { return }
                logger.info("preview \(launch.id) closed: nobody held it open")
                close(launch.id)
            }
            do {
                try await launch.group.run()
            } catch {
                logger.warning("preview \(launch.id) stopped: \(error)")
            }
            // A listener that could not bind ends here: `open` hears so at once.
            launch.bound.resolve(nil)
            tasks.cancelAll()
        }
        state.withLock { _ = $0.entries.removeValue(forKey: launch.id) }
    }

    /// Opens a preview of a project: binds its listener and returns once it accepts connections.
    /// - Throws: `APIError` (too many open, shutting down, or the port cannot be bound).
    func open(_ project: DocumentID) async throws -> API.Preview {
        let token = PreviewToken()
        var generator = SystemRandomNumberGenerator()
        let id = String((0..<16).map { _ in "0123456789abcdef".randomElement(using: &generator)! })
        let streams = PreviewStreams()
        let bound = BoundPort()
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .warning)
        let application = Application(
            responder: PreviewResponder(project: project, token: token, source: source, streams: streams, logger: logger),
            // Loopback only, whatever the daemon's other addresses: the page is for this machine's browser.
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil),
            onServerRunning: { channel in bound.resolve(channel.localAddress?.port) },
            eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup.singleton),
            logger: quiet)
        var configuration = ServiceGroupConfiguration(services: [application], logger: quiet)
        configuration.maximumGracefulShutdownDuration = .seconds(2)
        // No bound on cancelling: swift-service-lifecycle ends the process
        // (fatalError) when cancellation takes longer than the bound, and a
        // preview listener slow to stop on a loaded machine must never take
        // the daemon down with it.
        configuration.maximumCancellationDuration = nil
        let group = ServiceGroup(configuration: configuration)
        let (closing, closer) = AsyncStream<Void>.makeStream()
        let preview = API.Preview(id: id, project: project.description, url: "", token: token.description, port: 0, held: false)
        try state.withLock { state throws(APIError) in
            guard !state.isShutDown else { throw APIError(.conflict, "the daemon is shutting down") }
            guard state.entries.count < API.PreviewLease.maximumOpen else {
                throw APIError(
                    .conflict, "\(API.PreviewLease.maximumOpen) previews are open already; close one (storyteller preview stops its own on Ctrl-C)")
            }
            state.entries[id] = Entry(preview: preview, streams: streams, closer: closer)
        }
        if case .terminated = launcher.yield(Launch(id: id, group: group, closing: closing, bound: bound)) {
            bound.resolve(nil)  // shutting down meanwhile
        }
        guard let port = await bound.wait(seconds: 20) else {
            close(id)
            throw APIError(.internal, "the preview listener could not be opened on 127.0.0.1")
        }
        let opened = state.withLock { state -> API.Preview? in
            state.entries[id]?.preview.port = port
            state.entries[id]?.preview.url = "http://127.0.0.1:\(port)/\(token)/"
            return state.entries[id]?.preview
        }
        // Closed meanwhile (its lease ran out on a machine too busy to start it, or the daemon is stopping).
        guard let opened else { throw APIError(.conflict, "the preview was closed before its listener was ready; ask again") }
        return opened
    }

    /// The open previews.
    func list() -> [API.Preview] {
        state.withLock { $0.entries.values.map(\.preview).filter { $0.port != 0 }.sorted { $0.id < $1.id } }
    }

    /// The preview `id`, if it is open.
    func preview(_ id: String) -> API.Preview? {
        state.withLock { $0.entries[id]?.preview }
    }

    /// Marks a preview held by one client.
    /// - Throws: `APIError` (`not_found`, or `conflict` when another holds it).
    func hold(_ id: String) throws(APIError) -> API.Preview {
        try state.withLock { state throws(APIError) in
            guard let entry = state.entries[id], entry.preview.port != 0 else { throw APIError(.notFound, "no open preview \(id)") }
            guard !entry.preview.held else { throw APIError(.conflict, "preview \(id) is held by another client already") }
            state.entries[id]?.preview.held = true
            return state.entries[id]!.preview
        }
    }

    /// Closes a preview: its page's event streams end and its listener stops
    /// accepting at once. Returns what it was (nil when it was not open).
    @discardableResult
    func close(_ id: String) -> API.Preview? {
        guard let entry = state.withLock({ $0.entries.removeValue(forKey: id) }) else { return nil }
        entry.streams.close()
        entry.closer.finish()  // `serve` stops the listener
        return entry.preview
    }
}

/// The port a listener was bound to, told once by `onServerRunning`.
private final class BoundPort: Sendable {
    private let state = Mutex<(port: Int??, waiter: CheckedContinuation<Int?, Never>?)>((nil, nil))

    func resolve(_ port: Int?) {
        let waiter = state.withLock { state -> CheckedContinuation<Int?, Never>? in
            guard state.port == nil else { return nil }
            state.port = .some(port)
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: port)
    }

    func wait(seconds: Int) async -> Int? {
        await withTaskGroup(of: Int?.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let known = self.state.withLock { state -> Int?? in
                        if let port = state.port { return port }
                        state.waiter = continuation
                        return nil
                    }
                    if let known { continuation.resume(returning: known) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                self.resolve(nil)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
