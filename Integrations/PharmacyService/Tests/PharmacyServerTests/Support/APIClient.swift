import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PharmacyServer

/// A real HTTP client for the server's API, over AsyncHTTPClient.
struct APIClient: Sendable {
    struct Reply: Sendable {
        var status: HTTPResponseStatus
        var body: String

        func decoded() throws -> SessionResponse {
            try JSONDecoder().decode(SessionResponse.self, from: Data(body.utf8))
        }
    }

    let client: HTTPClient
    let base: String

    func send(_ method: HTTPMethod, _ path: String, json: String? = nil) async throws -> Reply {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        if let json {
            request.headers.add(name: "content-type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: json))
        }
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        return Reply(status: response.status, body: String(buffer: body))
    }

    func open(_ session: String) async throws -> Reply {
        try await send(.PUT, "/sessions/\(session)")
    }

    func get(_ session: String) async throws -> Reply {
        try await send(.GET, "/sessions/\(session)")
    }

    func post(_ session: String, _ event: ClientEvent) async throws -> Reply {
        let json = String(decoding: try JSONEncoder().encode(event), as: UTF8.self)
        return try await send(.POST, "/sessions/\(session)/events", json: json)
    }
}
