import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Every error the server answers with: an HTTP status and a JSON body
/// `{"error": {"code": "...", "message": "..."}}` whose `code` is stable (clients branch on it)
/// and whose `message` is for people (it may change).
///
/// | status | code | when |
/// |---|---|---|
/// | 400 | `invalid_session_id` | the id is not 1–64 of `A-Z a-z 0-9 - _` |
/// | 400 | `invalid_json` | the body is not JSON |
/// | 400 | `invalid_event` | the body is JSON but not an event: unknown `type`, a missing or mistyped field, a key given twice, an `index` or `request` not written as an integer in its range |
/// | 400 | `unknown_place` | `pickPlace` names no place on the map |
/// | 400 | `malformed_request` | the request is not valid HTTP/1.1 (the connection is closed) |
/// | 404 | `session_not_found` | no open session has that id (never opened, closed, or expired after being idle); never for `PUT` |
/// | 404 | `not_found` | no such path (a path with an empty segment, `/sessions//x`, is none) |
/// | 405 | `method_not_allowed` | the path exists, not with this method (the `Allow` header lists those it has) |
/// | 408 | `request_timeout` | the request's body did not arrive within the read timeout (the connection is closed) |
/// | 409 | `session_closed` | a `DELETE` closed the session while this `PUT` waited for its first load (that `DELETE` answered 200) |
/// | 413 | `body_too_large` | the body is larger than the limit (16 KiB by default) |
/// | 415 | `unsupported_media_type` | an event's `Content-Type` is not `application/json` |
/// | 431 | `headers_too_large` | the request's headers are larger than the limit (the connection is closed) |
/// | 503 | `too_many_sessions` | the session cap is reached; retry later |
/// | 503 | `too_many_connections` | this connection is past the connection cap: it answers `GET /health` only, then closes (`Retry-After`) |
/// | 503 | `session_owned_elsewhere` | with PostgreSQL: another server holds the session's lease (`Retry-After`) |
/// | 503 | `journal_unavailable` | the journal failed or did not answer in time; the request was not carried out (on `/health`: the journal does not answer) |
/// | 503 | `shutting_down` | the server is shutting down; the request was not carried out (or, for a `PUT`, the session's first load was cut short) |
/// | 500 | `internal_error` | a bug; the message says no more |
public struct APIError: Error, Hashable, Sendable {
    /// The HTTP status.
    public var status: HTTPResponse.Status
    /// The stable code.
    public var code: String
    /// What went wrong, in words.
    public var message: String
    /// Extra response headers (`Allow` for 405).
    public var headers: HTTPFields = [:]

    /// An error with these values.
    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    /// The JSON body.
    public struct Body: Codable, Hashable, Sendable {
        public struct Detail: Codable, Hashable, Sendable {
            public var code: String
            public var message: String
        }
        public var error: Detail
    }

    /// The body's bytes.
    var bodyBytes: ByteBuffer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(Body(error: .init(code: code, message: message)))) ?? Data("{}".utf8)
        return ByteBuffer(bytes: data)
    }

    /// The full response.
    var response: Response {
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: bodyBytes))
    }

    static let invalidSessionID = APIError(
        .badRequest, "invalid_session_id", "a session id is 1 to 64 letters, digits, '-' or '_'")
    static func invalidJSON(_ detail: String) -> APIError {
        APIError(.badRequest, "invalid_json", "the body is not valid JSON: \(detail)")
    }
    static func invalidEvent(_ detail: String) -> APIError {
        APIError(.badRequest, "invalid_event", detail)
    }
    static let unknownPlace = APIError(.badRequest, "unknown_place", "no map place has that reference")
    static func sessionNotFound(_ id: String) -> APIError {
        // `id` has been validated: letters, digits, '-' and '_' only.
        APIError(.notFound, "session_not_found", "no open session '\(id)'; open it with PUT /sessions/\(id)")
    }
    static func sessionClosed(_ id: String) -> APIError {
        APIError(.conflict, "session_closed", "session '\(id)' was closed while it was opening; open it again")
    }
    static let notFound = APIError(.notFound, "not_found", "no such path")
    static func methodNotAllowed(_ allowed: [HTTPRequest.Method]) -> APIError {
        let list = allowed.map(\.rawValue).joined(separator: ", ")
        var headers = HTTPFields()
        headers[.allow] = list
        return APIError(.methodNotAllowed, "method_not_allowed", "this path allows \(list)", headers: headers)
    }
    static func bodyTooLarge(limit: Int) -> APIError {
        APIError(.contentTooLarge, "body_too_large", "the body is larger than \(limit) bytes")
    }
    static let unsupportedMediaType = APIError(
        .unsupportedMediaType, "unsupported_media_type", "send events as Content-Type: application/json")
    static let tooManySessions = APIError(
        .serviceUnavailable, "too_many_sessions", "too many sessions are open; retry later")
    static let tooManyConnections: APIError = {
        var headers = HTTPFields()
        headers[.retryAfter] = "1"
        return APIError(
            .serviceUnavailable, "too_many_connections",
            "the server has too many connections open; this one answers GET /health only; retry later", headers: headers)
    }()
    static let shuttingDown = APIError(
        .serviceUnavailable, "shutting_down", "the server is shutting down; the request was not carried out")
    static func sessionOwnedElsewhere(_ id: String) -> APIError {
        var headers = HTTPFields()
        headers[.retryAfter] = "1"
        return APIError(
            .serviceUnavailable, "session_owned_elsewhere",
            "another server holds session '\(id)'; the request was not carried out; retry once its lease has expired",
            headers: headers)
    }
    static func journalUnavailable(_ detail: String) -> APIError {
        APIError(.serviceUnavailable, "journal_unavailable", "the session journal failed; the request was not carried out: \(detail)")
    }
    static let internalError = APIError(.internalServerError, "internal_error", "the server failed to answer")
    static let requestTimeout = APIError(
        .requestTimeout, "request_timeout", "the request did not arrive in time")
    static let headersTooLarge = APIError(
        .init(code: 431, reasonPhrase: "Request Header Fields Too Large"), "headers_too_large",
        "the request's headers are too large")
    static let malformedRequest = APIError(.badRequest, "malformed_request", "the request is not valid HTTP/1.1")
}

/// Turns every error a route throws, and the router's own 404, into an ``APIError`` response.
struct APIErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        // The router reads `/sessions//x` or `/sessions/x/` as `/sessions/x`: another path.
        guard !Self.hasEmptySegment(request.uri.path) else { return APIError.notFound.response }
        do {
            return try await next(request, context)
        } catch let error as APIError {
            return error.response
        } catch let error as HTTPError where error.status == .notFound {
            // The router found no route: either no such path, or not with this method.
            if let allowed = Self.allowedMethods(path: request.uri.path) {
                return APIError.methodNotAllowed(allowed).response
            }
            return APIError.notFound.response
        } catch {
            context.logger.error("unexpected error answering \(request.method) \(request.uri.path): \(error)")
            return APIError.internalError.response
        }
    }

    /// Whether `path` has an empty segment (`//`, or a trailing `/`); `/` alone has none.
    static func hasEmptySegment(_ path: String) -> Bool {
        path != "/" && path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().contains { $0.isEmpty }
    }

    /// The methods the server's routes take for `path`, or `nil` for a path it does not have.
    static func allowedMethods(path: String) -> [HTTPRequest.Method]? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        switch segments.count {
        case 1 where segments[0] == "health": return [.get]
        case 2 where segments[0] == "sessions": return [.get, .put, .delete]
        case 3 where segments[0] == "sessions" && segments[2] == "events": return [.post]
        default: return nil
        }
    }
}
