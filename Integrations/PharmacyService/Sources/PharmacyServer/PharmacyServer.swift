import FeedbackExamples
import FeedbackLoop
import FeedbackLoopServices
import Hummingbird
import Logging
import ServiceLifecycle

/// The pharmacies example over HTTP: one loop per session, each request an event, each answer
/// the state right after that event was reduced.
///
/// | request | does |
/// |---|---|
/// | `PUT /sessions/{id}` | opens the session (201) or finds it (200); answers once the saved pharmacies have loaded |
/// | `GET /sessions/{id}` | the session's current state |
/// | `POST /sessions/{id}/events` | sends a ``ClientEvent`` (JSON body); answers with the state right after it was reduced |
/// | `DELETE /sessions/{id}` | ends the session; answers with its final state |
/// | `GET /health` | `ok` |
///
/// Errors: 400 for a malformed id or body or an unknown map place, 404 for an unknown session,
/// 503 while shutting down or when too many sessions are open. Every body is JSON
/// (``SessionResponse``) except `/health` and errors.
///
/// ```swift
/// let server = PharmacyServer(configuration: .init(port: 0, sessions: .init(makeService: { _ in
///     FakePharmaciesService(saved: FakePharmaciesService.sampleSaved)
/// })))
/// try await server.application.runService()   // SIGTERM or SIGINT shut it down gracefully
/// ```
public struct PharmacyServer: Sendable {
    /// Where the server listens and how its sessions behave.
    public struct Configuration: Sendable {
        /// The loopback port; 0 picks a free one (see ``PharmacyServer/init(configuration:onListening:)``).
        public var port: Int
        /// Backend, grace period and back end of the sessions.
        public var sessions: PharmacySessions.Configuration
        /// The places the fake map offers; `pickPlace` names one by its reference.
        public var mapPlaces: [Place]
        /// The server's log (the sessions log with ``PharmacySessions/Configuration/logger``).
        public var logger: Logger

        /// A configuration with these values.
        public init(
            port: Int = 8080,
            sessions: PharmacySessions.Configuration,
            mapPlaces: [Place] = FakePharmaciesService.sampleMapPlaces,
            logger: Logger = Logger(label: "pharmacy-service")
        ) {
            self.port = port
            self.sessions = sessions
            self.mapPlaces = mapPlaces
            self.logger = logger
        }
    }

    /// The address every server binds to: loopback only.
    public static let host = "127.0.0.1"

    /// The sessions, for inspection.
    public let sessions: PharmacySessions
    /// The HTTP application, with the sessions among its services. Run it with `runService()`, or
    /// put it in a `ServiceGroup` of your own.
    public let application: Application<RouterResponder<BasicRequestContext>>

    /// Builds the server; nothing listens until ``application`` runs.
    ///
    /// - Parameter onListening: Called with the bound port once the server accepts connections
    ///   (the one the system picked when ``Configuration/port`` is 0).
    public init(configuration: Configuration, onListening: @escaping @Sendable (Int) async -> Void = { _ in }) {
        let sessions = PharmacySessions(configuration: configuration.sessions)
        self.sessions = sessions
        self.application = Application(
            router: Self.router(sessions: sessions, mapPlaces: configuration.mapPlaces),
            configuration: ApplicationConfiguration(
                address: .hostname(Self.host, port: configuration.port), serverName: "pharmacy-service"),
            // Application's own services start before its HTTP server and stop after it.
            services: [sessions],
            onServerRunning: { channel in
                await onListening(channel.localAddress?.port ?? configuration.port)
            },
            logger: configuration.logger)
    }

    static func router(sessions: PharmacySessions, mapPlaces: [Place]) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("health") { _, _ in "ok" }

        router.put("sessions/:id") { _, context -> EditedResponse<SessionResponse> in
            let id = try context.parameters.require("id")
            let (session, created) = try open(id, in: sessions)
            // The initial load is the only effect a fresh session runs; answer once it is done.
            await session.loop.waitUntilIdle()
            return EditedResponse(
                status: created ? .created : .ok, response: SessionResponse(session: id, state: session.loop.state))
        }

        router.get("sessions/:id") { _, context -> SessionResponse in
            let id = try context.parameters.require("id")
            return SessionResponse(session: id, state: try existing(id, in: sessions).loop.state)
        }

        router.post("sessions/:id/events") { request, context -> SessionResponse in
            let id = try context.parameters.require("id")
            let session = try existing(id, in: sessions)
            let clientEvent = try await request.decode(as: ClientEvent.self, context: context)
            guard let event = clientEvent.event(mapPlaces: mapPlaces) else {
                throw HTTPError(.badRequest, message: "no map place has that reference")
            }
            do {
                return SessionResponse(session: id, state: try await session.sendAndWait(event))
            } catch {
                // The service is shutting down (the session refused the event or stopped).
                throw HTTPError(.serviceUnavailable, message: "\(error)")
            }
        }

        router.delete("sessions/:id") { _, context -> SessionResponse in
            let id = try context.parameters.require("id")
            guard let finalState = await sessions.close(id) else {
                throw HTTPError(.notFound, message: "no session '\(id)'")
            }
            return SessionResponse(session: id, state: finalState)
        }
        return router
    }

    private static func open(_ id: String, in sessions: PharmacySessions) throws -> (PharmacySessions.Session, Bool) {
        do {
            return try sessions.open(id)
        } catch .invalidSessionID {
            throw HTTPError(.badRequest, message: PharmacySessionsError.invalidSessionID.description)
        } catch {
            throw HTTPError(.serviceUnavailable, message: error.description)
        }
    }

    private static func existing(_ id: String, in sessions: PharmacySessions) throws -> PharmacySessions.Session {
        guard let session = sessions.session(id) else {
            throw HTTPError(.notFound, message: "no session '\(id)'; open it with PUT /sessions/\(id)")
        }
        return session
    }
}
