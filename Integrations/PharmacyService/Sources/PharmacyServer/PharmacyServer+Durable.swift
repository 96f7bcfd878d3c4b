import FeedbackExamples
import FeedbackLoop
import FeedbackLoopDurable
import FeedbackLoopServices
import Hummingbird

/// The routes of a server with a journal (``PharmacySessions/Configuration/journal``): the same
/// API, with every answer given after the request's event was committed to the journal.
///
/// A session's first request in this process (any method) recovers it from the journal; `GET`,
/// `POST` and `DELETE` of a session that is not open there answer 404 as without a journal.
/// Another server on the same PostgreSQL database may hold a session: its requests then answer
/// 503 `session_owned_elsewhere` until that server's lease has expired, and a server whose lease
/// was taken over answers the same instead of writing (its appends are fenced).
extension PharmacyServer {
    static func durableRoutes(_ router: Router<BasicRequestContext>, sessions: DurableSessions, mapPlaces: [Place], limits: Limits) {
        let registry = sessions.registry

        /// Runs `body` with the session's running loop, answering every refusal with its API error.
        @Sendable
        func withSession<Result: Sendable>(
            _ id: String, _ body: @Sendable (DurableLoop<SessionState, SessionEvent>) async throws -> Result
        ) async throws -> Result {
            try await using(id) {
                try await registry.withLoop(for: id) { lease in
                    var loop: DurableLoop<SessionState, SessionEvent>?
                    do {
                        let running = try await lease.loop.state.loop()
                        loop = running
                        return try await body(running)
                    } catch {
                        throw apiError(for: error, session: id, loop: loop, registry: registry)
                    }
                }
            }
        }

        /// A session that is not open leaves the registry at once, so that requests for unknown
        /// ids do not fill it up to the cap.
        @Sendable
        func notFound(_ id: String) async -> APIError {
            await registry.remove(id)
            return APIError.sessionNotFound(id)
        }

        router.put("sessions/:id") { _, context -> EditedResponse<SessionResponse> in
            let id = try sessionID(context)
            let (created, response) = try await withSession(id) { loop -> (Bool, SessionResponse) in
                let created = loop.state.pharmacies == nil
                if created { try await loop.sendAndWait(.opened) }
                // Answer once the saved pharmacies have loaded, as without a journal; a session
                // stopped meanwhile (by shutdown or a DELETE) ends the states.
                for await state in loop.states {
                    guard let screen = state.pharmacies else { break }
                    if screen != .loading {
                        return (created, SessionResponse(session: id, state: screen, journaled: state, sequence: loop.sequence))
                    }
                }
                throw registry.isAcceptingLoops ? APIError.sessionClosed(id) : APIError.shuttingDown
            }
            return EditedResponse(status: created ? .created : .ok, response: response)
        }

        router.get("sessions/:id") { _, context -> SessionResponse in
            let id = try sessionID(context)
            let answer = try await withSession(id) { loop -> SessionResponse? in
                let state = loop.state
                return state.pharmacies.map {
                    SessionResponse(session: id, state: $0, journaled: state, sequence: loop.sequence)
                }
            }
            guard let answer else { throw await notFound(id) }
            return answer
        }

        router.post("sessions/:id/events") { request, context -> SessionResponse in
            let id = try sessionID(context)
            let (clientEvent, number) = try await ClientEvent.decodeNumbered(request, maximumBodySize: limits.maximumBodySize)
            guard let event = clientEvent.event(mapPlaces: mapPlaces) else { throw APIError.unknownPlace }
            let answer = try await withSession(id) { loop -> SessionResponse? in
                guard loop.state.pharmacies != nil else { return nil }
                let state = try await loop.sendAndWait(.request(event, number: number))
                // A DELETE that was committed just before this request leaves it unapplied.
                return state.pharmacies.map {
                    SessionResponse(session: id, state: $0, journaled: state, sequence: loop.sequence)
                }
            }
            guard let answer else { throw await notFound(id) }
            return answer
        }

        router.delete("sessions/:id") { _, context -> SessionResponse in
            let id = try sessionID(context)
            let answer = try await withSession(id) { loop -> SessionResponse? in
                let before = loop.state
                guard let screen = before.pharmacies else { return nil }
                try await loop.sendAndWait(.closed)
                return SessionResponse(session: id, state: screen, journaled: before, sequence: loop.sequence)
            }
            guard let answer else { throw await notFound(id) }
            await registry.remove(id)
            return answer
        }
    }

    /// The API error for a failure to use a journaled session.
    static func apiError(
        for error: any Error, session id: String, loop: DurableLoop<SessionState, SessionEvent>?,
        registry: DurableSessions.Registry
    ) -> any Error {
        switch error {
        case is APIError, is LoopRegistryError:
            return error
        case JournalError.ownedElsewhere, JournalError.fenced:
            return APIError.sessionOwnedElsewhere(id)
        case DurableLoopError.stopped, DurableSessionHandle.Unavailable.closed:
            // Stopped on its own (a lost lease, a fenced append), by shutdown, or by a DELETE.
            if let failure = loop?.failure { return apiError(for: failure, session: id, loop: nil, registry: registry) }
            return registry.isAcceptingLoops ? APIError.sessionNotFound(id) : APIError.shuttingDown
        default:
            return APIError.journalUnavailable("\(error)")
        }
    }
}
