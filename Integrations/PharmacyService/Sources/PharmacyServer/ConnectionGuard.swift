import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// One per connection, right after HTTP parsing: bounds the time a request's body may take to
/// arrive, and answers a request HTTP/1.1 cannot parse with the server's JSON error shape.
///
/// - A request whose head has arrived but whose body has not fully arrived within `readTimeout`
///   is answered 408 `request_timeout` and the connection closed (a slow body would otherwise
///   hold the connection as long as it trickles). Silence and slow heads are bounded by
///   Hummingbird's idle timeout, which counts only complete HTTP parts as activity.
/// - A parse error is answered 431 `headers_too_large` (headers past the limit) or 400
///   `malformed_request`, with a JSON body, and the connection closed — Hummingbird's own answer
///   is an empty 400.
///
/// An answer is written only when it cannot interleave with one the application is writing
/// (every earlier request answered, no answer in progress); otherwise the connection is just
/// closed.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let readTimeout: TimeAmount
    private var deadline: Scheduled<Void>?
    /// Requests whose end has arrived, and answers whose end was written.
    private var requestsRead = 0
    private var responsesWritten = 0
    private var isWritingResponse = false
    private var isClosing = false

    init(readTimeout: TimeAmount) {
        self.readTimeout = readTimeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
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
        case .head: isWritingResponse = true
        case .body: break
        case .end:
            isWritingResponse = false
            responsesWritten += 1
        }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        answerAndClose(context: context, with: parserError == .headerOverflow ? .headersTooLarge : .malformedRequest)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    private func answerAndClose(context: ChannelHandlerContext, with error: APIError) {
        guard !isClosing else { return }
        isClosing = true
        if !isWritingResponse, responsesWritten == requestsRead {
            let body = error.bodyBytes
            var fields = HTTPFields()
            fields[.contentType] = "application/json; charset=utf-8"
            fields[.contentLength] = "\(body.readableBytes)"
            fields[.connection] = "close"
            context.write(wrapOutboundOut(.head(HTTPResponse(status: error.status, headerFields: fields))), promise: nil)
            context.write(wrapOutboundOut(.body(body)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
        context.close(promise: nil)
    }
}
