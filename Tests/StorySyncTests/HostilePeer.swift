import StoryCore
import StoryIdentity
import StoryWireClient
import Testing

@testable import StorySync

/// A paired peer that speaks the protocol over real TLS on loopback (the
/// project's own frame codec and TLS types, through `ProtocolClient`), and says
/// whatever a test wants it to: offers of documents it was never given, forged
/// changes, snapshots it may not send, absurd version vectors.
typealias HostilePeer = ProtocolClient

extension ProtocolClient {
    static func session<T: Sendable>(
        to port: Int, as identity: Identity, helloVersion: UInt64 = Message.protocolVersion,
        _ body: @Sendable (ProtocolClient) async throws -> T
    ) async throws -> T {
        try await session(to: port, as: identity, group: SyncNode.group, helloVersion: helloVersion, body)
    }

    /// Waits for an Error with `code`, then for the daemon to close the connection.
    func expectRefusal(_ code: SyncError.Code, closing: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await expect("an error \(code)") { if case .error(code.rawValue, _) = $0 { true } else { false } }
        if closing {
            let closed = await waitUntilClosed()
            #expect(closed, "the daemon kept the connection open after \(code)", sourceLocation: sourceLocation)
        }
    }
}
