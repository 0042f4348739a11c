import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// The optional Prometheus listener (`metrics-listen`): plain HTTP on a
/// loopback TCP address serving `GET /metrics`, the same text as the control
/// API's `GET /v1/metrics` (one registry). For a scraper that cannot reach a
/// Unix socket; the address is checked to be loopback by the settings.
struct MetricsService: Service, CustomStringConvertible {
    let application: Application<RouterResponder<BasicRequestContext>>
    let address: ListenAddress
    var description: String { "metrics" }

    /// - Parameters:
    ///   - exposition: the metrics text, read at each scrape.
    ///   - boundPort: told the port once the listener is bound (port 0 picks one).
    init(
        address: ListenAddress, exposition: @escaping @Sendable () async throws -> String, boundPort: @escaping @Sendable (Int) -> Void,
        logger: Logger
    ) {
        self.address = address
        let router = Router()
        router.get("/metrics") { _, _ -> Response in
            let text = try await exposition()
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"], body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        // Hummingbird says "Server started" at info; this service says where, once, itself.
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .warning)
        application = Application(
            router: router,
            configuration: .init(address: .hostname(address.host, port: address.port), serverName: nil),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? address.port
                boundPort(port)
                logger.info("serving metrics on http://\(ListenAddress(host: address.host, port: port))/metrics")
            },
            eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup.singleton),
            logger: quiet)
    }

    func run() async throws {
        do {
            try await application.run()
        } catch {
            throw MetricsListenError(address: address, error: error)
        }
    }
}

/// The metrics listener could not be opened, in words a person can act on.
struct MetricsListenError: Error, CustomStringConvertible {
    let description: String

    init(address: ListenAddress, error: any Error) {
        let setting = "metrics-listen \(address)"
        switch (error as? IOError)?.errnoCode {
        case EADDRINUSE:
            description = "\(setting): port \(address.port) is in use (another storytellerd or exporter? choose another port)"
        case EACCES:
            description = "\(setting): listening on port \(address.port) needs privileges this user does not have (use a port above 1023)"
        case EADDRNOTAVAIL:
            description = "\(setting): \(address.host) is not an address of this machine"
        case let code?:
            description = "cannot serve metrics on \(address): \(String(cString: strerror(code)))"
        case nil:
            description = "cannot serve metrics on \(address): \(error)"
        }
    }
}
