import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import PharmacyServer

/// A real HTTP/1.1 client for the server's API: one TCP connection per request, straight over
/// SwiftNIO's HTTP/1 codec.
///
/// Not AsyncHTTPClient, because that drags swift-nio-ssl (BoringSSL), swift-nio-http2,
/// swift-configuration and swift-algorithms into the build for plain-text loopback requests,
/// and a cold build of this package is what CI pays on every run. A connection per request also
/// keeps the shutdown test honest: nothing is pooled, so a request after shutdown begins must
/// open a new connection.
struct APIClient: Sendable {
    struct Reply: Sendable {
        var status: HTTPResponseStatus
        var body: String
        var headers: HTTPHeaders = [:]

        /// The error code of an error answer, if the body has the server's error shape.
        var errorCode: String? {
            (try? JSONDecoder().decode(APIError.Body.self, from: Data(body.utf8)))?.error.code
        }

        func decoded() throws -> SessionResponse {
            try JSONDecoder().decode(SessionResponse.self, from: Data(body.utf8))
        }
    }

    /// The connection was closed before the whole response arrived: by the server (a reset, a
    /// close before the request was even written) or by `timeout`.
    struct IncompleteResponse: Error, CustomStringConvertible {
        var request: String
        /// What the channel reported, if it failed rather than ended.
        var cause: (any Error)?
        var description: String { "no complete response to \(request)" + (cause.map { ": \($0)" } ?? "") }
    }

    let host: String
    let port: Int
    /// Bounds connecting.
    var connectTimeout: TimeAmount = .seconds(10)
    /// Bounds a whole request, so that a hung server fails the test instead of stalling it.
    var timeout: TimeAmount = .seconds(30)

    func send(
        _ method: HTTPMethod, _ path: String, json: String? = nil, contentType: String = "application/json",
        headers extra: [(String, String)] = []
    ) async throws -> Reply {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(connectTimeout)
            .connect(to: try SocketAddress(ipAddress: host, port: port)) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(
                        wrappingChannelSynchronously: channel)
                }
            }
        // Closing the channel ends the inbound stream below, which then throws IncompleteResponse.
        let deadline = channel.channel.eventLoop.scheduleTask(in: timeout) { channel.channel.close(promise: nil) }
        defer { deadline.cancel() }

        // Once connected, any failure means the same thing to a test: the server closed the
        // connection without a (complete) answer. Which error the channel reports depends on when
        // the close lands — a write on a channel already closed by a reset (`ChannelError`), a
        // reset seen by a read (`IOError`), a plain end of input — so they are one error here. A
        // server that closes a connection queued before its listener closed does exactly this.
        do {
            return try await exchange(over: channel, method, path, json: json, contentType: contentType, headers: extra)
        } catch let error as IncompleteResponse {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch {
            throw IncompleteResponse(request: "\(method) \(path)", cause: error)
        }
    }

    private func exchange(
        over channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>,
        _ method: HTTPMethod, _ path: String, json: String?, contentType: String, headers extra: [(String, String)]
    ) async throws -> Reply {
        try await channel.executeThenClose { inbound, outbound in
            var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
            head.headers.add(name: "host", value: "\(host):\(port)")
            head.headers.add(name: "connection", value: "close")
            let body = json.map { ByteBuffer(string: $0) }
            if body != nil {
                head.headers.add(name: "content-type", value: contentType)
            }
            for (name, value) in extra { head.headers.add(name: name, value: value) }
            head.headers.add(name: "content-length", value: "\(body?.readableBytes ?? 0)")
            try await outbound.write(.head(head))
            if let body {
                try await outbound.write(.body(.byteBuffer(body)))
            }
            try await outbound.write(.end(nil))

            var status: HTTPResponseStatus?
            var headers = HTTPHeaders()
            var received = ByteBuffer()
            for try await part in inbound {
                switch part {
                case .head(let responseHead):
                    status = responseHead.status
                    headers = responseHead.headers
                case .body(var chunk):
                    received.writeBuffer(&chunk)
                case .end:
                    guard let status else { break }
                    return Reply(status: status, body: String(buffer: received), headers: headers)
                }
            }
            throw IncompleteResponse(request: "\(method) \(path)")
        }
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
