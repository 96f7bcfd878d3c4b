import FeedbackExamples
import FeedbackLoop
import FeedbackLoopServices
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import Tracing

/// The pharmacies example over HTTP: one loop per session, each request an event, each answer
/// the state right after that event was reduced.
///
/// | request | does |
/// |---|---|
/// | `PUT /sessions/{id}` | opens the session (201) or finds it (200); answers once the saved pharmacies have loaded |
/// | `GET /sessions/{id}` | the session's current state |
/// | `POST /sessions/{id}/events` | sends a ``ClientEvent`` (JSON body); answers with the state right after it was reduced |
/// | `DELETE /sessions/{id}` | ends the session; answers with its final state |
/// | `GET /health` | `ok`; with a journal, 503 `journal_unavailable` when the journal does not answer a trivial read within 2 s |
///
/// Every error is JSON with a stable code; see ``APIError``. Session bodies are
/// ``SessionResponse``.
///
/// ## Traces
/// With ``PharmacySessions/Configuration/tracer`` set, each request is a span (Hummingbird's
/// `TracingMiddleware`, which also continues a trace the client sent in `traceparent`), and the
/// session's loop adds a span per event it reduces and per effect under it: one request, one
/// trace, down to the back-end call an effect makes.
///
/// ## Shutdown
/// The server is one `Service`. On graceful shutdown the HTTP server stops accepting connections
/// and the sessions start draining *at the same moment*: a request that needs a session from
/// then on answers 503 `shutting_down`; a request waiting on a session (a `PUT` waiting for the
/// first load) answers as soon as that session has drained — within
/// ``PharmacySessions/Configuration/gracePeriod``, after which the session's effects are
/// cancelled. So shutdown takes the grace period at most, plus the time cancelled effects take
/// to end and ``Limits/readTimeout`` for a request whose body is still arriving.
///
/// ```swift
/// let server = PharmacyServer(configuration: .init(port: 0, sessions: .init(makeService: { _ in
///     FakePharmaciesService(saved: FakePharmaciesService.sampleSaved)
/// })))
/// try await ServiceGroup(services: [server], gracefulShutdownSignals: [.sigterm], logger: logger).run()
/// ```
public struct PharmacyServer: Service {
    /// What bounds each connection.
    public struct Limits: Sendable {
        /// Connections served at once. Past it a new connection is one of the
        /// ``excessConnections``, or closed at once.
        public var maximumConnections: Int
        /// Connections past ``maximumConnections`` kept open at once, each for one request within
        /// a second: `GET /health` is answered, anything else 503 `too_many_connections`, then the
        /// connection is closed. Past these too a new connection is closed at once, so none waits
        /// in the kernel's backlog: a health probe is answered however many idle connections
        /// hold the cap. Zero or more.
        public var excessConnections: Int
        /// A connection with no request in progress is closed after this long without a
        /// complete HTTP part: a silent connection, an idle keep-alive one, or one whose request
        /// head trickles in.
        public var idleTimeout: Duration
        /// A request's body must have arrived this long after its head, or the request is
        /// answered 408 and the connection closed.
        public var readTimeout: Duration
        /// The largest request body; larger answers 413.
        public var maximumBodySize: Int
        /// The largest request head (all header lines); larger answers 431.
        public var maximumHeaderSize: Int

        /// Limits with these values.
        public init(
            maximumConnections: Int = 4096,
            excessConnections: Int = 1024,
            idleTimeout: Duration = .seconds(15),
            readTimeout: Duration = .seconds(10),
            maximumBodySize: Int = 16 * 1024,
            maximumHeaderSize: Int = 16 * 1024
        ) {
            self.maximumConnections = maximumConnections
            self.excessConnections = excessConnections
            self.idleTimeout = idleTimeout
            self.readTimeout = readTimeout
            self.maximumBodySize = maximumBodySize
            self.maximumHeaderSize = maximumHeaderSize
        }
    }

    /// Where the server listens and how its sessions and connections behave.
    public struct Configuration: Sendable {
        /// The loopback port; 0 picks a free one (see ``PharmacyServer/init(configuration:onListening:)``).
        public var port: Int
        /// Backend, grace period, cap, expiry and back end of the sessions.
        public var sessions: PharmacySessions.Configuration
        /// Connection cap, timeouts and size limits.
        public var limits: Limits
        /// The places the fake map offers; `pickPlace` names one by its reference.
        public var mapPlaces: [Place]
        /// The server's log (the sessions log with ``PharmacySessions/Configuration/logger``).
        public var logger: Logger

        /// A configuration with these values.
        public init(
            port: Int = 8080,
            sessions: PharmacySessions.Configuration,
            limits: Limits = Limits(),
            mapPlaces: [Place] = FakePharmaciesService.sampleMapPlaces,
            logger: Logger = Logger(label: "pharmacy-service")
        ) {
            self.port = port
            self.sessions = sessions
            self.limits = limits
            self.mapPlaces = mapPlaces
            self.logger = logger
        }
    }

    /// The address every server binds to: loopback only.
    public static let host = "127.0.0.1"

    /// The sessions, for inspection.
    public let sessions: PharmacySessions
    private let application: Application<RouterResponder<BasicRequestContext>>
    private let logger: Logger

    /// Builds the server; nothing listens until ``run()`` runs.
    ///
    /// - Parameter onListening: Called with the bound port once the server accepts connections
    ///   (the one the system picked when ``Configuration/port`` is 0).
    public init(configuration: Configuration, onListening: @escaping @Sendable (Int) async -> Void = { _ in }) {
        let sessions = PharmacySessions(configuration: configuration.sessions)
        let limits = configuration.limits
        precondition(limits.maximumConnections >= 1, "PharmacyServer: maximumConnections must be at least 1")
        precondition(limits.excessConnections >= 0, "PharmacyServer: excessConnections must not be negative")
        precondition(limits.idleTimeout > .zero && limits.readTimeout > .zero, "PharmacyServer: timeouts must be positive")
        self.sessions = sessions
        self.logger = configuration.logger
        let connections = ConnectionCounter(maximum: limits.maximumConnections, excess: limits.excessConnections)
        var decoder = HTTP1Channel.Configuration.DecoderConfiguration()
        decoder.maxHeaderListSize = limits.maximumHeaderSize
        decoder.maxHeaderFieldSize = limits.maximumHeaderSize
        self.application = Application(
            router: Self.router(sessions: sessions, mapPlaces: configuration.mapPlaces, limits: limits),
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [ConnectionGuard(readTimeout: TimeAmount(limits.readTimeout), counter: connections)],
                    idleTimeout: TimeAmount(limits.idleTimeout),
                    httpDecoderConfiguration: decoder)),
            configuration: ApplicationConfiguration(
                address: .hostname(Self.host, port: configuration.port), serverName: "pharmacy-service",
                // Room for a burst of connects (the default, 256, makes a burst wait on SYN
                // retries); the kernel caps it at net.core.somaxconn.
                // Every connection is accepted at once; ConnectionGuard closes those past the cap.
                backlog: 1024),
            onServerRunning: { channel in
                await onListening(channel.localAddress?.port ?? configuration.port)
            },
            logger: configuration.logger)
    }

    /// Runs the HTTP server and the sessions until graceful shutdown (see ``PharmacyServer``)
    /// or cancellation. Both learn of the shutdown at once; this returns when both have ended.
    public func run() async throws {
        // A PostgreSQL journal's client runs until the sessions have stopped, since stopping one
        // gives its lease back. Detached, so that it does not see the graceful shutdown (which
        // would end it at once) — it is cancelled below instead.
        var client: Task<Void, Never>?
        if case .postgres(let journal) = sessions.configuration.journal {
            client = Task.detached { await journal.client.run() }
        }
        defer { client?.cancel() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await sessions.run() }
            group.addTask {
                // The request spans are made with the tracer the middleware finds: this one.
                guard let tracer = sessions.configuration.tracer else { return try await application.run() }
                try await withTracer(tracer) { try await application.run() }
            }
            if let durable = sessions.durable {
                // Said at once, not at the first session's request: the server still starts, and
                // its /health answers 503 until the journal answers.
                group.addTask { [logger] in
                    if let unavailable = await durable.health.check() {
                        logger.error("the session journal is unavailable: \(unavailable); /health answers 503 until it answers")
                    }
                }
            }
            // The first failure (a port already in use, say) ends the other too.
            while try await group.next() != nil {}
        }
    }

    static func router(sessions: PharmacySessions, mapPlaces: [Place], limits: Limits) -> Router<BasicRequestContext> {
        let router = Router()
        // Outermost, so that a request's span covers the error answer too.
        if sessions.configuration.tracer != nil { router.middlewares.add(TracingMiddleware()) }
        router.middlewares.add(APIErrorMiddleware())
        router.get("health") { _, _ -> String in
            if let unavailable = await sessions.durable?.health.check() {
                throw APIError.journalUnavailable(unavailable.description)
            }
            return "ok"
        }
        if let durable = sessions.durable {
            durableRoutes(router, sessions: durable, mapPlaces: mapPlaces, limits: limits)
            return router
        }
        let registry = sessions.registry

        router.put("sessions/:id") { _, context -> EditedResponse<SessionResponse> in
            let id = try sessionID(context)
            return try await using(id) {
                try await registry.withLoop(for: id) { lease in
                    // The initial load is the only effect a fresh session runs; answer once it is
                    // done — or once shutdown has drained the session, whichever comes first.
                    await lease.loop.waitUntilIdle()
                    if !lease.service.isAcceptingEvents {
                        // Stopped while this request waited: by shutdown, or by a DELETE.
                        throw registry.isAcceptingLoops ? APIError.sessionClosed(id) : APIError.shuttingDown
                    }
                    return EditedResponse(
                        status: lease.created ? .created : .ok,
                        response: SessionResponse(session: id, state: lease.loop.state))
                }
            }
        }

        router.get("sessions/:id") { _, context -> SessionResponse in
            let id = try sessionID(context)
            guard let session = registry.existing(id) else { throw APIError.sessionNotFound(id) }
            return SessionResponse(session: id, state: session.loop.state)
        }

        router.post("sessions/:id/events") { request, context -> SessionResponse in
            let id = try sessionID(context)
            guard registry.existing(id) != nil else { throw APIError.sessionNotFound(id) }
            let clientEvent = try await ClientEvent.decode(request, maximumBodySize: limits.maximumBodySize)
            guard let event = clientEvent.event(mapPlaces: mapPlaces) else { throw APIError.unknownPlace }
            let state = try await using(id) {
                try await registry.withLoop(for: id, creatingIfAbsent: false) { lease in
                    do {
                        return try await lease.service.sendAndWait(event)
                    } catch {
                        // Refused by a draining session, or the session stopped (closed by a
                        // DELETE) before reducing it: either way the event was not carried out.
                        throw registry.isAcceptingLoops ? APIError.sessionNotFound(id) : APIError.shuttingDown
                    }
                }
            }
            return SessionResponse(session: id, state: state)
        }

        router.delete("sessions/:id") { _, context -> SessionResponse in
            let id = try sessionID(context)
            guard let finalState = await registry.remove(id) else { throw APIError.sessionNotFound(id) }
            return SessionResponse(session: id, state: finalState)
        }
        return router
    }

    static func sessionID(_ context: BasicRequestContext) throws -> String {
        guard let id = context.parameters.get("id"), PharmacySessions.isValid(id) else {
            throw APIError.invalidSessionID
        }
        return id
    }

    /// Runs `body`, answering the registry's refusals with their API errors.
    static func using<Result>(_ id: String, _ body: () async throws -> sending Result) async throws
        -> sending Result
    {
        do {
            return try await body()
        } catch let error as LoopRegistryError {
            switch error.code {
            case .tooManyLoops: throw APIError.tooManySessions
            case .shuttingDown: throw APIError.shuttingDown
            default: throw APIError.sessionNotFound(id)
            }
        }
    }
}
