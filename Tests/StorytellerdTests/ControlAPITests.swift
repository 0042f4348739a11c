import Foundation
import Testing

@testable import storytellerd

/// The control API of the built daemon, over its real Unix socket.
@Suite(.serialized) struct ControlAPITests {
    static let otherPeer = "YBB5GOE-GQ5FJ33-5EEN22A-XE43GRK-VDMGR2H-3HRCQFX-DSTMRI6-ZPZJYQP"

    @Test func statusIdentityAndPeersOverTheSocket() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let socketPath = home.path + "/run/control.sock"
        let daemon = try DaemonProcess(
            arguments: ["--data-dir", home.path + "/state", "--socket", socketPath, "--listen", "127.0.0.1:0"], environment: [:])
        defer { daemon.kill() }
        try await daemon.waitForLog("ready")
        let attributes = try FileManager.default.attributesOfItem(atPath: socketPath)
        #expect((attributes[.posixPermissions] as? Int) == 0o600, "only the owner may connect")
        let client = ControlSocketClient(path: socketPath)

        let status = try client.get("/v1/status")
        #expect(status.status == 200)
        #expect(status.headers["content-type"] == "application/json")
        let statusBody = try #require(status.json as? [String: Any])
        let peerID = try #require(statusBody["peerID"] as? String)
        #expect(daemon.output.contains(peerID))
        #expect(statusBody["documents"] as? Int == 0)
        #expect(statusBody["peersConnected"] as? Int == 0)

        let identity = try #require(try client.get("/v1/identity").json as? [String: Any])
        #expect(identity["peerID"] as? String == peerID)
        #expect((identity["certificatePEM"] as? String)?.hasPrefix("-----BEGIN CERTIFICATE-----") == true)

        let added = try client.post("/v1/peers", json: #"{"id":"\#(Self.otherPeer)","address":"127.0.0.1:9","name":"b"}"#)
        #expect(added.status == 201)
        #expect((added.json as? [String: Any])?["state"] as? String == "configured")
        let listed = try #require(try client.get("/v1/peers").json as? [[String: Any]])
        #expect(listed.map { $0["id"] as? String } == [Self.otherPeer])
        #expect(listed.first?["address"] as? String == "127.0.0.1:9")
        #expect(try client.get("/v1/peers/pending").json as? [Any] != nil)
        #expect(try client.request("DELETE", "/v1/peers/\(Self.otherPeer)").status == 200)
        #expect(try client.get("/v1/peers").json as? [Any] != nil)
        #expect((try client.get("/v1/peers").json as? [Any])?.isEmpty == true)
        #expect(try client.request("DELETE", "/v1/peers/\(Self.otherPeer)").errorCode == "not_found")
        #expect(try client.get("/v1/projects").json as? [Any] != nil)

        #expect(try await daemon.terminate() == 0)
        #expect(!FileManager.default.fileExists(atPath: socketPath), "the socket is removed at shutdown")
    }

    @Test func badRequestsGetTypedErrorsAndTheDaemonKeepsServing() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let daemon = try DaemonProcess(arguments: ["--data-dir", home.path, "--listen", "127.0.0.1:0"], environment: [:])
        defer { daemon.kill() }
        try await daemon.waitForLog("ready")
        let client = ControlSocketClient(path: home.path + "/control.sock")
        let cases: [(method: String, target: String, body: String?, status: Int, code: String, mentions: String)] = [
            ("GET", "/v1/nowhere", nil, 404, "not_found", "/v1/nowhere"),
            ("GET", "/v2/status", nil, 404, "not_found", "/v2/status"),
            ("PUT", "/v1/status", nil, 405, "method_not_allowed", "PUT"),
            ("POST", "/v1/peers", nil, 400, "bad_request", "JSON body"),
            ("POST", "/v1/peers", #"{"id":"#, 400, "bad_request", "malformed JSON"),
            ("POST", "/v1/peers", #"{"id":5}"#, 400, "bad_request", "'id'"),
            ("POST", "/v1/peers", #"{"name":"b"}"#, 400, "bad_request", "missing field 'id'"),
            ("POST", "/v1/peers", #"{"id":"not-a-peer"}"#, 400, "bad_request", "not a peer id"),
            ("POST", "/v1/peers", #"{"id":"\#(Self.otherPeer)","address":"nowhere"}"#, 400, "bad_request", "HOST:PORT"),
            ("POST", "/v1/peers/\(Self.otherPeer)/accept", nil, 404, "not_found", "no pending peer"),
            ("DELETE", "/v1/peers/XXXXXXX", nil, 400, "bad_request", "not a peer id"),
        ]
        for item in cases {
            let response = try client.request(item.method, item.target, body: item.body.map { Data($0.utf8) })
            #expect(response.status == item.status, "\(item.method) \(item.target)")
            #expect(response.errorCode == item.code, "\(item.method) \(item.target)")
            let message = ((response.json as? [String: Any])?["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.contains(item.mentions), "\(item.method) \(item.target): \(message)")
        }
        // A body over the limit (1 MiB) is refused without being read whole.
        let huge = try client.request("POST", "/v1/peers", body: Data(repeating: 0x61, count: 2 << 20))
        #expect(huge.status == 413)
        #expect(huge.errorCode == "too_large")
        // Garbage that is not HTTP closes that connection only.
        _ = try? client.request("BR\u{0}KEN", "nonsense")
        #expect(try client.get("/v1/status").status == 200, "the daemon keeps serving")
        #expect(daemon.errors.contains("POST /v1/peers → 400"), "refused requests are logged")
        #expect(try await daemon.terminate() == 0)
    }

    /// docs/control-api.md lists exactly the daemon's routes.
    @Test func everyRouteIsDocumented() throws {
        let document = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/control-api.md"), encoding: .utf8)
        var documented: Set<String> = []
        for line in document.split(separator: "\n") where line.hasPrefix("| `") {
            let route = line.dropFirst(3).prefix { $0 != "`" }
            let parts = route.split(separator: " ")
            guard parts.count == 2, parts[1].hasPrefix("/v1/") else { continue }
            let template = parts[1].dropFirst(4).split(separator: "/").map { $0.hasPrefix("{") ? "{}" : String($0) }
            documented.insert("\(parts[0]) " + template.joined(separator: "/"))
        }
        let served = Set(ControlRoutes.routes.map { "\($0.method) \($0.template)" })
        #expect(!served.isEmpty)
        #expect(documented == served, "documented but not served: \(documented.subtracting(served)); served but not documented: \(served.subtracting(documented))")
    }
}
