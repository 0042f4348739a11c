import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOFoundationCompat
import NIOPosix
import StoryAPI
import StoryCore
import StoryIdentity
import StoryStore
import StorySync
import StoryTestSupport
import Testing

@testable import StoryDaemon

/// The control API's routes served in memory, the Hummingbird way
/// (`app.test(.router)`): real controllers over a real store in a temporary
/// directory, no socket and no daemon process. What only the socket, the CLI
/// or two daemons show stays in StorytellerdTests.
@Suite struct ControlRouteTests {
    /// The services a daemon hands its controllers, in a directory of their own.
    final class Services: Sendable {
        let directory: TemporaryDirectory
        let api: ControlAPI
        let identity: Identity

        init() async throws {
            directory = try TemporaryDirectory()
            let logger = Logger(label: "storyteller.test.routes")
            identity = try Identity.loadOrCreate(in: directory.file("identity"))
            let clock = WallClock.system
            var options = StoreOptions()
            options.clock = clock
            let store = try Store(path: directory.file("store.sqlite"), identity: try identity.signingIdentity, options: options)
            let blobs = try BlobStore(directory: directory.file("blobs"))
            let manager = try PeerManager(
                store: store, identity: identity, configuration: SyncConfiguration(name: "routes"),
                group: MultiThreadedEventLoopGroup.singleton, clock: clock, discovery: nil,
                blobExchange: BlobExchange(blobs: blobs, store: store, logger: logger), logger: logger)
            let library = LibraryService(store: store, clock: clock, logger: logger)
            try await library.prepare()
            try FileManager.default.createDirectory(atPath: directory.file("tmp"), withIntermediateDirectories: true)
            api = ControlAPI(
                store: store, identity: identity, manager: manager, discovery: nil, library: library,
                trash: ProjectTrash(store: store, library: library, clock: clock, retention: .default, logger: logger),
                name: "routes", started: .now, clock: clock, metrics: DaemonMetrics(), temporaryDirectory: directory.file("tmp"),
                blobs: blobs, acceptedMediaTypes: Set(MediaType.allCases),
                previews: PreviewRegistry(
                    source: SlideshowSource(store: store, blobs: blobs, renderer: PanelRenderService(label: "storyteller.test.preview")),
                    logger: logger),
                logger: logger, exports: ExportJobs(directory: directory.file("tmp/exports"), logger: logger))
        }

        /// The application serving the routes to a caller with `uid` (default: this process's user).
        func application(uid: uid_t = getuid()) -> some ApplicationProtocol {
            let (router, _) = api.makeRouter(access: .owner) { _ in PeerCredentials(pid: getpid(), uid: uid, gid: getgid()) }
            return Application(router: router)
        }
    }

    static func json(_ value: some Encodable) throws -> ByteBuffer { ByteBuffer(bytes: try API.encoder.encode(value)) }

    static func decode<Value: Decodable>(_ type: Value.Type, _ response: TestResponse) throws -> Value {
        try API.decoder.decode(type, from: Data(buffer: response.body))
    }

    /// A project created through the API.
    static func createProject(_ client: some TestClientProtocol, named name: String) async throws -> String {
        try await client.execute(uri: "/v1/projects", method: .post, body: try json(API.CreateProject(name: name))) { response in
            #expect(response.status == .created)
            return try decode(API.Project.self, response).id
        }
    }

    @Test func statusNamesThisDaemonAndCountsItsProjects() async throws {
        let services = try await Services()
        try await services.application().test(.router) { client in
            _ = try await Self.createProject(client, named: "Night Train")
            try await client.execute(uri: "/v1/status", method: .get) { response in
                #expect(response.status == .ok)
                let status = try Self.decode(API.Status.self, response)
                #expect(status.peerID == services.identity.peerID.description)
                #expect(status.name == "routes")
                #expect(status.projects == 1)
            }
        }
    }

    @Test func projectsAreCreatedListedAndReadWithTheirQueryParameters() async throws {
        let services = try await Services()
        try await services.application().test(.router) { client in
            let id = try await Self.createProject(client, named: "Night Train")
            try await client.execute(uri: "/v1/projects?deleted=false", method: .get) { response in
                let listed = try Self.decode([API.ProjectSummary].self, response)
                #expect(listed.map(\.id) == [id])
                #expect(listed.first?.name == "Night Train")
            }
            try await client.execute(uri: "/v1/projects/\(id)?points=false", method: .get) { response in
                #expect(response.status == .ok)
                let decoded = try Self.decode(API.Project.self, response)
                #expect(decoded.name == "Night Train")
            }
            // A query value of the wrong type names the parameter and what was given.
            try await client.execute(uri: "/v1/projects?deleted=maybe", method: .get) { response in
                #expect(response.status == .badRequest)
                let error = try Self.decode(APIError.self, response)
                #expect(error.message == "deleted must be true or false, not 'maybe'")
                #expect(error.field == "deleted")
            }
            try await client.execute(uri: "/v1/projects/\(id)/history?limit=0", method: .get) { response in
                #expect(response.status == .badRequest)
                let decoded = try Self.decode(APIError.self, response)
                #expect(decoded.field == "limit")
            }
            try await client.execute(uri: "/v1/projects?tag=a&tag=b", method: .get) { response in
                #expect(response.status == .badRequest)
                let decoded = try Self.decode(APIError.self, response)
                #expect(decoded.message.hasPrefix("the query cannot be read"))
            }
        }
    }

    @Test func anEditAppliesAsOneChangeAndAWrongFieldIsNamedApart() async throws {
        let services = try await Services()
        try await services.application().test(.router) { client in
            let id = try await Self.createProject(client, named: "Night Train")
            let scene = try await client.execute(
                uri: "/v1/projects/\(id)/edits", method: .post, body: try Self.json(API.EditRequest(ops: [.addScene(at: nil, title: "Dawn")]))
            ) { response in
                #expect(response.status == .ok)
                let result = try Self.decode(API.EditResult.self, response)
                #expect(result.changed)
                return try #require(result.created.first ?? nil)
            }
            // A bad operation after a good one: nothing of the request is applied.
            let body = #"{"ops":[{"op":"shot.add","scene":"\#(scene)"},{"op":"set","object":"\#(scene)","field":"duration","value":"long"}]}"#
            try await client.execute(uri: "/v1/projects/\(id)/edits", method: .post, body: ByteBuffer(string: body)) { response in
                #expect(response.status == .badRequest)
                let error = try Self.decode(APIError.self, response)
                #expect(error.field == "ops[1].duration")
                #expect(error.problem == "takes a number")
            }
            try await client.execute(uri: "/v1/projects/\(id)", method: .get) { response in
                let project = try Self.decode(API.Project.self, response)
                #expect(project.scenes.count == 1 && project.scenes[0].shots.isEmpty, "the refused request added no shot")
            }
            try await client.execute(uri: "/v1/projects/\(id)/undo", method: .post) { response in
                #expect(response.status == .ok)
                let decoded = try Self.decode(API.UndoResult.self, response)
                #expect(decoded.undone == true)
            }
            try await client.execute(uri: "/v1/projects/\(id)", method: .get) { response in
                let decoded = try Self.decode(API.Project.self, response)
                #expect(decoded.scenes.isEmpty)
            }
        }
    }

    @Test func unknownThingsAre404sAndAWrongMethodA405WithAllow() async throws {
        let services = try await Services()
        try await services.application().test(.router) { client in
            try await client.execute(uri: "/v1/projects/\(String(repeating: "ab", count: 16))", method: .get) { response in
                #expect(response.status == .notFound)
                let decoded = try Self.decode(APIError.self, response)
                #expect(decoded.code == .notFound)
            }
            try await client.execute(uri: "/v1/projects/not-an-id", method: .get) { response in
                #expect(response.status == .badRequest)
                let decoded = try Self.decode(APIError.self, response)
                #expect(decoded.message.contains("not a project or folder id"))
            }
            try await client.execute(uri: "/v1/status", method: .delete) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == "GET")
            }
            try await client.execute(uri: "/v1/peers/pending", method: .get) { response in
                #expect(response.status == .ok, "a literal segment is a route of its own, never a peer called 'pending'")
            }
        }
    }

    @Test func aCallerWhoIsNotTheDaemonsUserIsRefusedInWords() async throws {
        let services = try await Services()
        try await services.application(uid: getuid() &+ 4242).test(.router) { client in
            try await client.execute(uri: "/v1/status", method: .get) { response in
                #expect(response.status == .forbidden)
                let error = try Self.decode(APIError.self, response)
                #expect(error.code == .forbidden)
                #expect(error.message.contains("the daemon's user"), "\(error.message)")
            }
        }
    }

    @Test func conflictsOfAProjectNobodyWroteConcurrentlyAreNone() async throws {
        let services = try await Services()
        try await services.application().test(.router) { client in
            let id = try await Self.createProject(client, named: "Night Train")
            try await client.execute(uri: "/v1/projects/\(id)/conflicts", method: .get) { response in
                #expect(response.status == .ok)
                let conflicts = try Self.decode(API.Conflicts.self, response)
                #expect(conflicts.project == id && conflicts.conflicts.isEmpty)
            }
            let keep = #"{"field":"project.title","value":1}"#
            try await client.execute(uri: "/v1/projects/\(id)/conflicts/keep", method: .post, body: ByteBuffer(string: keep)) { response in
                #expect(response.status == .conflict)
                let decoded = try Self.decode(APIError.self, response)
                #expect(decoded.message.contains("has no overwritten values"))
            }
        }
    }
}
