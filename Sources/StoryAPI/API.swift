package import Foundation

/// The control API's request and response types, shared by the daemon
/// (`StoryDaemon`), `StoryClient` and the `storyteller` CLI: one definition of
/// every JSON shape on `/v1`. docs/control-api.md describes them; the
/// OpenAPI check compares docs/openapi.json with the routes that use them.
///
/// Ids are strings at this edge (an `OpID` is `counter@replica`, a peer id 8
/// groups of 7 characters); times are milliseconds since the epoch.
package enum API {
    /// The encoder of every answer: sorted keys (stable output for tests and
    /// diffs), slashes unescaped (paths and MIME types read as written).
    package static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// The decoder of every request and answer.
    package static var decoder: JSONDecoder { JSONDecoder() }

    /// Decodes a request body; every failure is an `APIError.badRequest` that
    /// names the field (`ops[2].brush.color: …`, and in `field`).
    /// - Throws: `APIError` with code `bad_request`.
    package static func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws(APIError) -> Value {
        guard !data.isEmpty else { throw APIError(.badRequest, "the request needs a JSON body") }
        do {
            return try decoder.decode(type, from: data)
        } catch let error as DecodingError {
            throw apiError(error)
        } catch {
            throw APIError(.badRequest, "malformed JSON: \(error)")
        }
    }

    /// A decoding failure in words: `ops[2]: 'brush.color' must be a colour like "#000000"`.
    package static func describe(_ error: DecodingError) -> String { apiError(error).message }

    /// A decoding failure as the API's error, with the field it is about
    /// (`field`: `ops[2].brush.color`; a set's value by its key, `ops[0].duration`).
    package static func apiError(_ error: DecodingError) -> APIError {
        switch error {
        case .keyNotFound(let key, let context):
            return located(context.codingPath + [key], "is missing") { "missing field '\($0)'" }
        case .typeMismatch(let type, let context):
            if context.codingPath.isEmpty { return APIError(.badRequest, "the body must be a JSON \(jsonKind(of: type))") }
            return located(context.codingPath, "has the wrong type: expected \(jsonKind(of: type))") {
                "field '\($0)' has the wrong type: expected \(jsonKind(of: type))"
            }
        case .valueNotFound(let type, let context):
            return located(context.codingPath, "must not be null (expected \(jsonKind(of: type)))") {
                "field '\($0)' must not be null (expected \(jsonKind(of: type)))"
            }
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return APIError(.badRequest, "malformed JSON: \(context.underlyingError.map { "\($0)" } ?? context.debugDescription)")
            }
            return located(context.codingPath, context.debugDescription) { "'\($0)' \(context.debugDescription)" }
        @unknown default:
            return APIError(.badRequest, "malformed request: \(error)")
        }
    }

    /// The error about the field at `path`, its message behind the list item
    /// it is in (`ops[2]: …`, the fields named from there). A set's `value`
    /// whose problem begins "of 'key'" is the field `key`.
    private static func located(_ path: [any CodingKey], _ problem: String, _ message: (String) -> String) -> APIError {
        var fullPath = fieldPath(path)
        var problem = problem
        if path.last?.stringValue == "value", problem.hasPrefix("of '"),
            let end = problem.dropFirst(4).firstIndex(of: "'")
        {
            let key = problem[problem.index(problem.startIndex, offsetBy: 4)..<end]
            fullPath = fieldPath(Array(path.dropLast()))
            fullPath += (fullPath.isEmpty ? "" : ".") + key
            problem = String(problem[problem.index(after: end)...].drop { $0 == " " })
        }
        let text: String
        if let item = path.lastIndex(where: { $0.intValue != nil }) {
            let field = fieldPath(Array(path[(item + 1)...]))
            let prefix = fieldPath(Array(path[...item]))
            text = field.isEmpty ? "\(prefix): \(message("item"))" : "\(prefix): \(message(field))"
        } else {
            text = message(fieldPath(path))
        }
        return APIError(.badRequest, field: fullPath, problem: problem, message: text)
    }

    /// `ops[2].brush.color` for a coding path.
    package static func fieldPath(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                if !text.isEmpty { text += "." }
                text += key.stringValue
            }
        }
        return text
    }

    private static func jsonKind(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "string"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int64.Type, is UInt64.Type, is Double.Type, is Float.Type: "number"
        case is [Any].Type: "array"
        default:
            String(describing: type).hasPrefix("Array") ? "array" : "object"
        }
    }
}

/// A coding key made at run time (edit operations name their own fields).
struct AnyKey: CodingKey {
    let stringValue: String
    let intValue: Int?
    init(_ string: String) {
        stringValue = string
        intValue = nil
    }
    init?(stringValue: String) { self.init(stringValue) }
    init?(intValue: Int) {
        stringValue = "\(intValue)"
        self.intValue = intValue
    }
}
