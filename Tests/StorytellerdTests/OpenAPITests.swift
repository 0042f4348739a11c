import Foundation
import StoryAPI
import StoryClient
import StoryCore
import StoryIdentity
import StoryRender
import StoryTestSupport
import Testing

/// docs/openapi.json is kept true: it has exactly the daemon's routes, and
/// what the running daemon answers matches the schemas it gives.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct OpenAPITests {
    private static func document() throws -> [String: Any] {
        let data = try Data(contentsOf: repositoryRoot.appendingPathComponent("docs/openapi.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func theOpenAPIFileHasExactlyTheDaemonsRoutes() async throws {
        let document = try Self.document()
        #expect((document["openapi"] as? String)?.hasPrefix("3.") == true)
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var documented: Set<String> = []
        for (path, item) in paths {
            #expect(path.hasPrefix("/v1/"))
            let template = path.dropFirst(4).split(separator: "/").map { $0.hasPrefix("{") ? "{}" : String($0) }.joined(separator: "/")
            for method in item.keys where ["get", "post", "put", "patch", "delete"].contains(method) {
                documented.insert("\(method.uppercased()) \(template)")
            }
        }
        let served = try await InProcessDaemon.routes()
        #expect(documented == served, "in the file only: \(documented.subtracting(served)); served only: \(served.subtracting(documented))")
    }

    /// Tools (schemathesis, generators) find operations by id: each id names
    /// one operation, and every link names an operation and its parameters.
    @Test func operationIdsAreUniqueAndLinksNameRealParameters() throws {
        let document = try Self.document()
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let components = document["components"] as? [String: Any]
        let declared = components?["parameters"] as? [String: [String: Any]] ?? [:]
        func names(_ list: Any?) -> [String] {
            (list as? [[String: Any]] ?? []).compactMap { parameter in
                if let reference = parameter["$ref"] as? String {
                    return declared[String(reference.split(separator: "/").last ?? "")]?["name"] as? String
                }
                return parameter["name"] as? String
            }
        }
        var parameters: [String: Set<String>] = [:]
        var links: [(from: String, target: String, parameter: String)] = []
        for (path, item) in paths {
            let shared = names(item["parameters"])
            for (method, value) in item {
                guard let operation = value as? [String: Any], let id = operation["operationId"] as? String else { continue }
                #expect(parameters[id] == nil, "operationId \(id) is used twice (again on \(method.uppercased()) \(path))")
                let own = names(operation["parameters"])
                parameters[id] = Set(shared + own)
                for (status, response) in operation["responses"] as? [String: [String: Any]] ?? [:] {
                    for (_, link) in response["links"] as? [String: [String: Any]] ?? [:] {
                        let target = link["operationId"] as? String ?? "?"
                        for name in (link["parameters"] as? [String: Any] ?? [:]).keys {
                            links.append(("\(method.uppercased()) \(path) \(status)", target, name))
                        }
                    }
                }
            }
        }
        #expect(!links.isEmpty)
        for link in links {
            let known = parameters[link.target]
            #expect(known != nil, "\(link.from) links to \(link.target), which is no operation")
            #expect(known?.contains(link.parameter) ?? true, "\(link.from) gives \(link.target) a parameter \(link.parameter) it does not have")
        }
    }

    @Test func answersOfARunningDaemonMatchTheirSchemas() async throws {
        let document = try Self.document()
        let validator = SchemaValidator(document: document)
        let daemon = try await StartedDaemon.start()
        defer { daemon.stop() }
        let project = try await daemon.cli("projects", "create", "Checked", "--folder", "root").output.trimmingCharacters(in: .whitespacesAndNewlines)
        let scene = try await daemon.cli("scenes", "add", project, "--title", "Harbour").output.trimmingCharacters(in: .whitespacesAndNewlines)
        let shot = try await daemon.cli("shots", "add", project, scene).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let layer = try await daemon.cli("layers", "add", project, shot, "--name", "harbour ink").output.trimmingCharacters(
            in: .whitespacesAndNewlines)
        #expect(try await daemon.cli("strokes", "add", project, layer, "--points", "[0.1,0.2,0.5,0.3,0.4,0.6]").status == 0)
        #expect(try await daemon.cli("folders", "create", "Boards").status == 0)
        #expect(try await daemon.cli("peers", "add", CLITests.otherPeer, "--address", "127.0.0.1:9").status == 0)
        #expect(try await daemon.cli("share", project, CLITests.otherPeer).status == 0)
        #expect(try await daemon.cli("share", "library", CLITests.otherPeer, "--read-only").status == 0)
        // Media: an image layer and a sound (shown by the project below too),
        // the answers of the upload routes, a file's bytes, and a refusal.
        let picture = Data(TestMedia.png(width: 40, height: 30))
        let mediaChecks: [(path: String, method: String, target: String, body: Data, status: Int)] = [
            ("/v1/projects/{project}/shots/{shot}/images", "post", "/v1/projects/\(project)/shots/\(shot)/images?name=Plate&fit=cover", picture, 201),
            (
                "/v1/projects/{project}/shots/{shot}/sound", "put", "/v1/projects/\(project)/shots/\(shot)/sound?offset=0.5",
                Data(TestMedia.wav(seconds: 0.5)), 200
            ),
            (
                "/v1/projects/{project}/shots/{shot}/images", "post", "/v1/projects/\(project)/shots/\(shot)/images",
                Data(TestMedia.wav(seconds: 0.5)), 415
            ),
            ("/v1/projects/{project}/shots/{shot}/images", "post", "/v1/projects/\(project)/shots/\(shot)/images", Data(), 400),
            ("/v1/projects/{project}/shots/{shot}/sound", "put", "/v1/projects/\(project)/shots/\(shot)/sound?session=", picture, 400),
        ]
        for check in mediaChecks {
            let response = try daemon.client.request(check.method.uppercased(), check.target, body: check.body)
            #expect(response.status == check.status, "\(check.target): \(response.status)")
            let schema = try #require(validator.responseSchema(path: check.path, method: check.method, status: check.status), "\(check.path)")
            let problems = validator.problems(of: try #require(response.json, "\(check.target) answers JSON"), against: schema, at: check.target)
            #expect(problems.isEmpty, "\(problems)")
        }
        let media = try #require(try daemon.client.get("/v1/projects/\(project)/media").json as? [[String: Any]])
        let blob = try #require(media.first { $0["type"] as? String == "image/png" }?["blob"] as? String)
        let file = try daemon.client.get("/v1/projects/\(project)/media/\(blob)")
        #expect(file.status == 200 && file.body == picture && file.headers["content-type"] == "image/png")
        let content = (validator.document["paths"] as? [String: Any]).flatMap { $0["/v1/projects/{project}/media/{blob}"] as? [String: Any] }
            .flatMap { $0["get"] as? [String: Any] }.flatMap { $0["responses"] as? [String: Any] }.flatMap { $0["200"] as? [String: Any] }
            .flatMap { $0["content"] as? [String: Any] }
        #expect(content?["image/png"] != nil && content?["audio/wav"] != nil, "the media's content types are documented")
        // A render in each format: the Content-Type sent is the one documented, and the documented
        // parameters are the API's and the renderer's limits.
        let render = (validator.document["paths"] as? [String: Any]).flatMap { $0["/v1/projects/{project}/shots/{shot}/render"] as? [String: Any] }
            .flatMap { $0["get"] as? [String: Any] }
        let renderTypes = (render?["responses"] as? [String: Any]).flatMap { $0["200"] as? [String: Any] }.flatMap { $0["content"] as? [String: Any] }
        for format in API.RenderFormat.allCases {
            let answer = try daemon.client.get("/v1/projects/\(project)/shots/\(shot)/render?format=\(format.rawValue)&width=64")
            #expect(answer.status == 200 && answer.headers["content-type"] == format.contentType, "\(format): \(answer.headers)")
            #expect(renderTypes?[format.contentType] != nil, "\(format.contentType) is documented")
        }
        let renderParameters = (render?["parameters"] as? [[String: Any]] ?? []).reduce(into: [String: [String: Any]]()) { found, parameter in
            if let name = parameter["name"] as? String { found[name] = parameter["schema"] as? [String: Any] }
        }
        #expect(renderParameters["format"]?["enum"] as? [String] == API.RenderFormat.allCases.map(\.rawValue))
        #expect(renderParameters["format"]?["default"] as? String == API.RenderFormat.default.rawValue)
        let widths = renderParameters["width"]
        #expect(widths?["minimum"] as? Int == API.RenderFormat.widths.lowerBound && widths?["maximum"] as? Int == API.RenderFormat.widths.upperBound)
        #expect(widths?["default"] as? Int == API.RenderFormat.defaultWidth && API.RenderFormat.defaultWidth == PanelRenderer.defaultWidth)
        #expect(API.RenderFormat.widths == PanelRenderer.widths && API.RenderFormat.onionCounts == PanelRenderer.onionRange)
        #expect(renderParameters["onion"]?["maximum"] as? Int == API.RenderFormat.onionCounts.upperBound)
        #expect(API.RenderFormat.allCases.map(\.contentType) == PanelFormat.allCases.map(\.contentType))
        let shown = String(decoding: try daemon.client.get("/v1/projects/\(project)").body, as: UTF8.self)
        #expect(shown.contains(#""kind":"image""#) && shown.contains(#""sound":{"#), "the project checked below shows the media")

        let checks: [(path: String, target: String, status: Int)] = [
            ("/v1/status", "/v1/status", 200), ("/v1/identity", "/v1/identity", 200), ("/v1/peers", "/v1/peers", 200),
            ("/v1/peers/pending", "/v1/peers/pending", 200), ("/v1/projects", "/v1/projects", 200),
            ("/v1/projects/{project}", "/v1/projects/\(project)", 200), ("/v1/projects/{project}/history", "/v1/projects/\(project)/history", 200),
            ("/v1/projects/{project}/conflicts", "/v1/projects/\(project)/conflicts", 200),
            ("/v1/projects/{project}/shares", "/v1/projects/\(project)/shares", 200), ("/v1/library", "/v1/library", 200),
            ("/v1/search", "/v1/search?q=harbour", 200), ("/v1/library/shares", "/v1/library/shares", 200),
            ("/v1/library/nodes/{node}", "/v1/library/nodes/Boards", 200),
            ("/v1/projects/{project}", "/v1/projects/00000000000000000000000000000000", 404),
            ("/v1/projects/{project}/media", "/v1/projects/\(project)/media", 200), ("/v1/media/transfers", "/v1/media/transfers", 200),
            ("/v1/projects/{project}/media/{blob}", "/v1/projects/\(project)/media/\(String(repeating: "0", count: 64))", 404),
            ("/v1/projects/{project}/versions", "/v1/projects/\(project)/versions", 200),
            ("/v1/projects/{project}", "/v1/projects/\(project)?at=now", 200),
            ("/v1/projects/{project}", "/v1/projects/\(project)?at=2001-01-01T00:00Z", 404),
            ("/v1/projects/{project}/versions/names", "/v1/projects/\(project)/versions/names", 200),
            ("/v1/projects/{project}/diff", "/v1/projects/\(project)/diff?from=now", 200),
        ]
        for check in checks {
            let response = try daemon.client.get(check.target)
            #expect(response.status == check.status, "\(check.target)")
            let schema = try #require(validator.responseSchema(path: check.path, method: "get", status: check.status), "\(check.path)")
            let body = try #require(response.json, "\(check.target) answers JSON")
            let problems = validator.problems(of: body, against: schema, at: check.target)
            #expect(problems.isEmpty, "\(problems)")
        }
        // A body the schema describes is accepted; the answer of a POST matches too.
        let edit = try daemon.client.request(
            "POST", "/v1/projects/\(project)/edits",
            body: Data(#"{"ops":[{"op":"scene.add","title":"Two"},{"op":"shot.add","scene":"$0"}],"session":"s"}"#.utf8))
        let editSchema = try #require(validator.responseSchema(path: "/v1/projects/{project}/edits", method: "post", status: 200))
        #expect(validator.problems(of: try #require(edit.json), against: editSchema, at: "edits").isEmpty)
        // A project in the trash, listed, shown, in the status, and purged (the
        // peer it is shared with never had the delete: refused, then forced).
        #expect(try await daemon.cli("projects", "delete", project).status == 0)
        let trashChecks: [(path: String, target: String, shows: String)] = [
            ("/v1/projects", "/v1/projects?deleted=true", "everyone"), ("/v1/projects/{project}", "/v1/projects/\(project)", "everyone"),
            ("/v1/status", "/v1/status", "deleted"),
        ]
        for check in trashChecks {
            let schema = try #require(validator.responseSchema(path: check.path, method: "get", status: 200))
            let body = try #require(try daemon.client.get(check.target).json)
            let problems = validator.problems(of: body, against: schema, at: check.target)
            #expect(problems.isEmpty, "\(problems)")
            #expect("\(body)".contains(check.shows), "\(check.target) shows the trash")
        }
        let refused = try daemon.client.request("POST", "/v1/projects/\(project)/purge", body: nil)
        #expect(refused.status == 409 && refused.errorCode == "conflict")
        let purged = try daemon.client.request("POST", "/v1/projects/\(project)/purge?force=true", body: nil)
        let purgeSchema = try #require(validator.responseSchema(path: "/v1/projects/{project}/purge", method: "post", status: 200))
        let purgeAnswer = try #require(purged.json)
        #expect(purged.status == 200 && validator.problems(of: purgeAnswer, against: purgeSchema, at: "purge").isEmpty)
        #expect((purged.json as? [String: Any])?["awaiting"] as? [String] == [CLITests.otherPeer])
        // The validator itself catches a wrong answer.
        let statusSchema = try #require(validator.responseSchema(path: "/v1/status", method: "get", status: 200))
        #expect(!validator.problems(of: ["peerID": 7], against: statusSchema, at: "fake").isEmpty)
        var extra = try #require(try daemon.client.get("/v1/status").json as? [String: Any])
        #expect(validator.problems(of: extra, against: statusSchema, at: "status").isEmpty)
        extra["undocumented"] = true
        #expect(validator.problems(of: extra, against: statusSchema, at: "status") == ["status: undocumented 'undocumented'"])
    }
}

/// Enough of JSON Schema (2020-12, as OpenAPI 3.1 uses it) to check answers:
/// $ref, type, properties (no undocumented keys), required, items, enum,
/// const, pattern, oneOf/anyOf/allOf.
struct SchemaValidator {
    let document: [String: Any]

    func responseSchema(path: String, method: String, status: Int) -> [String: Any]? {
        guard let paths = document["paths"] as? [String: Any], let item = paths[path] as? [String: Any],
            let operation = item[method] as? [String: Any], let responses = operation["responses"] as? [String: Any],
            var response = responses[String(status)] as? [String: Any]
        else { return nil }
        if let reference = response["$ref"] as? String, let resolved = resolve(reference) { response = resolved }
        let content = response["content"] as? [String: Any]
        return (content?["application/json"] as? [String: Any])?["schema"] as? [String: Any]
    }

    private func resolve(_ reference: String) -> [String: Any]? {
        var node: Any? = document
        for part in reference.dropFirst(2).split(separator: "/") { node = (node as? [String: Any])?[String(part)] }
        return node as? [String: Any]
    }

    func problems(of value: Any, against schema: [String: Any], at path: String) -> [String] {
        if let reference = schema["$ref"] as? String {
            guard let resolved = resolve(reference) else { return ["\(path): unresolved \(reference)"] }
            return problems(of: value, against: resolved, at: path)
        }
        var found: [String] = []
        if let all = schema["allOf"] as? [[String: Any]] { for part in all { found += problems(of: value, against: part, at: path) } }
        for key in ["oneOf", "anyOf"] {
            if let options = schema[key] as? [[String: Any]], !options.contains(where: { problems(of: value, against: $0, at: path).isEmpty }) {
                found.append("\(path): matches none of \(key)")
            }
        }
        if let type = schema["type"] {
            let types = (type as? [String]) ?? [type as? String ?? ""]
            guard types.contains(where: { Self.value(value, is: $0) }) else { return found + ["\(path): \(value) is not \(types)"] }
        }
        if let options = schema["enum"] as? [Any], !options.contains(where: { "\($0)" == "\(value)" }) {
            found.append("\(path): \(value) is not one of \(options)")
        }
        if let constant = schema["const"], "\(constant)" != "\(value)" { found.append("\(path): \(value) is not \(constant)") }
        if let pattern = schema["pattern"] as? String, let text = value as? String,
            text.range(of: pattern, options: .regularExpression) == nil
        {
            found.append("\(path): '\(text)' does not match \(pattern)")
        }
        if let object = value as? [String: Any] {
            let properties = schema["properties"] as? [String: [String: Any]] ?? [:]
            for key in schema["required"] as? [String] ?? [] where object[key] == nil { found.append("\(path): missing '\(key)'") }
            if schema["properties"] != nil && schema["additionalProperties"] == nil {
                for key in object.keys where properties[key] == nil { found.append("\(path): undocumented '\(key)'") }
            }
            for (key, child) in object {
                if let property = properties[key] { found += problems(of: child, against: property, at: "\(path).\(key)") }
            }
        }
        if let array = value as? [Any], let items = schema["items"] as? [String: Any] {
            for (index, element) in array.enumerated() { found += problems(of: element, against: items, at: "\(path)[\(index)]") }
        }
        return found
    }

    private static func value(_ value: Any, is type: String) -> Bool {
        switch type {
        case "object": return value is [String: Any]
        case "array": return value is [Any]
        case "string": return value is String
        case "boolean": return isBoolean(value)
        case "integer": return !isBoolean(value) && (value as? NSNumber).map { $0.doubleValue == $0.doubleValue.rounded() } == true
        case "number": return !isBoolean(value) && value is NSNumber
        case "null": return value is NSNull
        default: return false
        }
    }
}

/// Whether a value from JSONSerialization is a JSON true/false (a boolean
/// NSNumber, objCType "c"), not a number.
private func isBoolean(_ value: Any) -> Bool {
    if let number = value as? NSNumber { return String(cString: number.objCType) == "c" }
    return value is Bool
}
