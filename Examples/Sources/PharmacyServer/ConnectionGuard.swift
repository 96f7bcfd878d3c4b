import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// The server's open connections, by how each was admitted: the first
/// ``PharmacyServer/Limits/maximumConnections`` are served; past them, up to
/// ``PharmacyServer/Limits/excessConnections`` more are kept for one health check each; past
/// those, a new connection is closed at once. So the server holds at most the sum of the two, and
/// never leaves a connection waiting in the kernel's backlog behind idle ones: a health probe
/// gets its answer however many idle connections are open.
final class ConnectionCounter: Sendable {
    enum Admission {
        /// Served as usual.
        case served
        /// Past the cap: one request, answered only if it is `GET /health`, then closed.
        case healthOnly
        /// Past the cap and the excess: closed at once.
        case refused
    }

    private let maximum: Int
    private let excess: Int
    private let open = LockedValue((served: 0, healthOnly: 0))

    init(maximum: Int, excess: Int) {
        self.maximum = maximum
        self.excess = excess
    }

    func admit() -> Admission {
        open.withLock { open in
            if open.served < maximum {
                open.served += 1
                return .served
            }
            if open.healthOnly < excess {
                open.healthOnly += 1
                return .healthOnly
            }
            return .refused
        }
    }

    /// A connection admitted as `admission` closed.
    func release(_ admission: Admission) {
        open.withLock { open in
            switch admission {
            case .served: open.served -= 1
            case .healthOnly: open.healthOnly -= 1
            case .refused: break
            }
        }
    }
}

/// One per connection, right after HTTP parsing: admits the connection (``ConnectionCounter``),
/// bounds the time a request's body may take to arrive, and answers a request HTTP/1.1 cannot
/// parse with the server's JSON error shape.
///
/// - A connection past the cap (``ConnectionCounter/Admission/healthOnly``) may send one
///   request within ``excessWindow``: `GET /health` is answered as usual, anything else 503
///   `too_many_connections`, and the connection is closed after the answer (or after the window,
///   if nothing came). One past the excess too is closed at once.
/// - A request whose head has arrived but whose body has not fully arrived within `readTimeout`
///   is answered 408 `request_timeout` and the connection closed (a slow body would otherwise
///   hold the connection as long as it trickles). Silence and slow heads are bounded by
///   Hummingbird's idle timeout, which counts only complete HTTP parts as activity; when it
///   closes a connection whose request body is still arriving (an idle timeout shorter than
///   the read timeout), that request is answered 408 too, rather than left without an answer.
/// - A parse error is answered 431 `headers_too_large` (headers past the limit) or 400
///   `malformed_request`, with a JSON body, and the connection closed — Hummingbird's own answer
///   is an empty 400. A body cut short by the client's end of input (fewer bytes than its
///   `Content-Length`, then a half-close) is such an error: it is answered 400.
///
/// An answer is written only when it cannot interleave with one the application is writing
/// (every earlier request answered, no answer in progress); otherwise the connection is just
/// closed.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// How long a connection past the cap may take to send its request head.
    static let excessWindow = TimeAmount.seconds(1)

    private let readTimeout: TimeAmount
    private let counter: ConnectionCounter
    private var admission: ConnectionCounter.Admission?
    private var deadline: Scheduled<Void>?
    /// Requests whose end has arrived, and answers whose end was written.
    private var requestsRead = 0
    private var responsesWritten = 0
    private var isWritingResponse = false
    private var isClosing = false
    /// A health-only connection whose health check is being answered: closed after the answer.
    private var closesAfterResponse = false

    init(readTimeout: TimeAmount, counter: ConnectionCounter) {
        self.readTimeout = readTimeout
        self.counter = counter
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let admission = counter.admit()
        self.admission = admission
        switch admission {
        case .served:
            break
        case .healthOnly:
            deadline = context.eventLoop.assumeIsolated().scheduleTask(in: Self.excessWindow) { [self] in
                deadline = nil
                isClosing = true
                context.close(promise: nil)
            }
        case .refused:
            isClosing = true
            // Closed once the rest of the pipeline is in place (see channelActive(context:)).
            if context.channel.isActive { context.close(promise: nil) }
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        guard admission != .refused else {
            context.close(promise: nil)
            return
        }
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        if let admission { counter.release(admission) }
        admission = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A connection being closed by this guard reads nothing more: the answer it got (if
        // any) is its last.
        guard !isClosing else { return }
        switch unwrapInboundIn(data) {
        case .head(let request):
            if admission == .healthOnly {
                guard !closesAfterResponse, Self.isHealthCheck(request) else {
                    answerAndClose(context: context, with: .tooManyConnections)
                    return
                }
                closesAfterResponse = true
            }
            deadline?.cancel()
            deadline = context.eventLoop.assumeIsolated().scheduleTask(in: readTimeout) { [self] in
                deadline = nil
                answerAndClose(context: context, with: .requestTimeout)
            }
        case .body:
            break
        case .end:
            deadline?.cancel()
            deadline = nil
            requestsRead += 1
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var response):
            isWritingResponse = true
            if closesAfterResponse {
                response.headerFields[.connection] = "close"
                context.write(wrapOutboundOut(.head(response)), promise: promise)
                return
            }
        case .body:
            break
        case .end:
            isWritingResponse = false
            responsesWritten += 1
            if closesAfterResponse {
                let written = context.eventLoop.makePromise(of: Void.self)
                written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
                if let promise { written.futureResult.cascade(to: promise) }
                context.writeAndFlush(data, promise: written)
                return
            }
        }
        context.write(data, promise: promise)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // A close from further down the pipeline (the idle timeout) while a request's body is
        // still arriving: that request gets its answer first.
        if mode == .all, !isClosing, deadline != nil, admission == .served || closesAfterResponse {
            answerAndClose(context: context, with: .requestTimeout, promise: promise)
            return
        }
        context.close(mode: mode, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        answerAndClose(context: context, with: parserError == .headerOverflow ? .headersTooLarge : .malformedRequest)
    }

    static func isHealthCheck(_ request: HTTPRequest) -> Bool {
        request.method == .get && request.path?.split(separator: "?", maxSplits: 1).first == "/health"
    }

    private func answerAndClose(context: ChannelHandlerContext, with error: APIError, promise: EventLoopPromise<Void>? = nil) {
        guard !isClosing else {
            context.close(promise: promise)
            return
        }
        isClosing = true
        deadline?.cancel()
        deadline = nil
        if !isWritingResponse, responsesWritten == requestsRead {
            let body = error.bodyBytes
            var fields = error.headers
            fields[.contentType] = "application/json; charset=utf-8"
            fields[.contentLength] = "\(body.readableBytes)"
            fields[.connection] = "close"
            context.write(wrapOutboundOut(.head(HTTPResponse(status: error.status, headerFields: fields))), promise: nil)
            context.write(wrapOutboundOut(.body(body)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
        context.close(promise: promise)
    }
}
