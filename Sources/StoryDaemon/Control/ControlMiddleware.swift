import Foundation
import Hummingbird
import Logging
import NIOCore
import StoryAPI
import StoryCore
import StoryStore

/// Every control request passes here: the caller's credentials are checked,
/// and whatever a handler throws becomes an answer in the API's one error
/// shape. A store failure is a 5xx with its code, never a 404; only a
/// missing object or route is a 404.
struct ControlMiddleware: RouterMiddleware {
    typealias Context = ControlContext

    let access: SocketAccess
    let routes: SharedRouteTable
    let logger: Logger
    /// Who is at the other end of a connection (`SO_PEERCRED`; tests that
    /// serve the router in memory say who is asking).
    var credentials: @Sendable (any Channel) async -> PeerCredentials? = { await PeerCredentials.of($0) }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let credentials = await credentials(context.channel)
        guard let credentials, access.admits(credentials) else {
            logger.warning("refused a control request from uid \(credentials.map { String($0.uid) } ?? "unknown")")
            return APIError(.forbidden, Self.refusal(of: credentials?.uid, access: access)).response
        }
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = answer(to: error, request: request).response
        }
        if response.status.code >= 400 {
            logger.info("\(request.method) \(request.uri.path) → \(response.status.code)")
        }
        return response
    }

    /// Why a caller may not use the socket, and what to do, in its words:
    /// root too is only served as the daemon's user or a socket-group member.
    static func refusal(of uid: uid_t?, access: SocketAccess) -> String {
        let daemon = Self.userName(getuid()) ?? "uid \(getuid())"
        let caller = uid.map { Self.userName($0) ?? "uid \($0)" } ?? "this caller"
        switch access {
        case .owner:
            return "only \(daemon), the daemon's user, may use this socket (you are \(caller)"
                + (uid == 0 ? "; root is not served either" : "") + "): run the command as \(daemon) (sudo -u \(daemon) storyteller …), "
                + "or give the daemon a socket group (socket-group in its config) and add your user to it"
        case .group(let name, _):
            return "only \(daemon) and members of the group \(name) may use this socket (you are \(caller)): "
                + "add your user to it (sudo usermod -aG \(name) \(caller)), then log in again: a new group counts only in a new session"
        }
    }

    private static func userName(_ uid: uid_t) -> String? {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return nil }
        return String(cString: name)
    }

    /// The API error a failure is answered with.
    func answer(to error: any Error, request: Request) -> APIError {
        let target = "\(request.method) \(request.uri.path)"
        switch error {
        case let error as APIError:
            return error
        case let error as DocumentError:
            return Self.apiError(for: error)
        case let error as BlobError:
            switch error.kind {
            // The blob store's message says that nothing was kept.
            case .tooLarge: return APIError(.tooLarge, error.message)
            case .notFound: return APIError(.notFound, error.message)
            default:
                logger.error("blob store failure on \(target): \(error)")
                return APIError(.storeFailure, "the blob store failed: \(error.message)")
            }
        case let error as StoreError:
            // A failure of the disk or database, never a missing object: logged with its details.
            logger.error("store failure on \(target): \(error)")
            if error.isDiskFull { return APIError(.insufficientStorage, "the disk is full: \(error.message)") }
            return APIError(.storeFailure, "the store failed: \(error.message)")
        case let error as HTTPError where error.status == .notFound:
            let allowed = routes.methods(at: request.uri.path)
            guard allowed.isEmpty else {
                return APIError(
                    .methodNotAllowed, "\(request.method) is not allowed on \(request.uri.path) (only \(allowed.joined(separator: ", ")))",
                    allowed: allowed)
            }
            return APIError(.notFound, "no route \(target)")
        case is NIOTooManyBytesError:
            return APIError(.tooLarge, "the request body is larger than \(ControlAPI.maximumBodyBytes) bytes")
        case let error as HTTPError where error.status == .contentTooLarge:
            return APIError(.tooLarge, "the request body is larger than \(ControlAPI.maximumBodyBytes) bytes")
        case let error as HTTPError:
            return APIError(error.status.code >= 500 ? .internal : .badRequest, error.body ?? error.status.reasonPhrase)
        default:
            logger.error("failure on \(target): \(error)")
            return APIError(.internal, "\(error)")
        }
    }

    /// The answer to an edit or share the document refused.
    static func apiError(for error: DocumentError) -> APIError {
        switch error.code {
        case .notFound: APIError(.notFound, "refused, nothing applied: \(error.message)")
        case .forbidden: APIError(error.message.hasPrefix("read-only") ? .readOnly : .forbidden, error.message)
        case .invalidOperation, .conflict: APIError(.conflict, error.message)
        default: APIError(.badRequest, "refused, nothing applied: \(error.message)")
        }
    }
}

extension StoreError {
    /// SQLITE_FULL (13) behind an I/O failure: the disk is full.
    var isDiskFull: Bool { code == .io && sqliteCode.map { $0 & 0xFF == 13 } == true }
}
