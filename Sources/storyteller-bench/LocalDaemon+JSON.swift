import Foundation
import StoryClient

/// The benchmarks' way with a daemon: requests written as JSON literals and
/// answers read as JSON (a benchmark pokes at fields; the CLI and the
/// client read the API's types).
extension LocalDaemon {
    /// Sends a request with a JSON body; the JSON answer, or an error with the daemon's message.
    @discardableResult
    func call(_ method: String, _ target: String, _ body: [String: Any]? = nil) throws -> [String: Any] {
        (try JSONSerialization.jsonObject(with: try raw(method, target, body))) as? [String: Any] ?? [:]
    }

    /// Sends a request with a JSON body; the answer's body if it succeeded.
    func raw(_ method: String, _ target: String, _ body: [String: Any]?) throws -> Data {
        try raw(method, target, body: try body.map { try JSONSerialization.data(withJSONObject: $0) })
    }

    /// The shots of a project, in order, as the control API shows them.
    func shots(_ project: String) throws -> [[String: Any]] {
        let body = try call("GET", "/v1/projects/\(project)")
        return (body["scenes"] as? [[String: Any]] ?? []).flatMap { $0["shots"] as? [[String: Any]] ?? [] }
    }

    /// How many strokes a project shows.
    func strokeCount(_ project: String) throws -> Int {
        try shots(project).flatMap { $0["layers"] as? [[String: Any]] ?? [] }.reduce(0) { $0 + (($1["strokes"] as? [Any])?.count ?? 0) }
    }
}

extension ControlClient.Response {
    /// The body as a JSON object or array.
    var json: Any? { try? JSONSerialization.jsonObject(with: body) }
}
