import FeedbackExamples
import FeedbackLoop
import FeedbackLoopDurable
import FeedbackLoopServices
import Hummingbird

/// The routes of a server with a journal (``PharmacySessions/Configuration/journal``): the same
/// API, with every answer given after the request's event was committed to the journal, and
/// describing what the journal holds.
///
/// A session's first request in this process (any method) recovers it from the journal; `GET`,
/// `POST` and `DELETE` of a session that is not open there answer 404 as without a journal, and
/// of an id with nothing in the journal answer 404 without touching it (no ownership taken,
/// nothing written). Another server on the same PostgreSQL database may hold a session: its
/// requests then answer 503 `session_owned_elsewhere` until that server's lease has expired, and
/// a server whose lease was taken over answers the same instead of writing (its appends are
/// fenced).
///
/// Racing requests of one session are ordered by the journal, and each answer says where its
/// event landed: a `DELETE` answers with the state its close event found (every event journaled
/// before it, none after), a `PUT` whose session a `DELETE` closed before its first load
/// answers 409, and a request that found the session not open answers 404 without ending the
/// session's loop under a request that is opening it.
extension PharmacyServer {
    static func durableRoutes(_ router: Router<BasicRequestContext>, sessions: DurableSessions, mapPlaces: [Place], limits: Limits) {
        let registry = sessions.registry

        /// Runs `body` with the session's running loop, answering every refusal with its API error.
        ///
        /// - Parameter opening: `true` for a `PUT`; otherwise an id with nothing in the journal
        ///   answers 404 at once.
        @Sendable
        func withSession<Result: Sendable>(
            _ id: String, opening: Bool,
            _ body: @Sendable (DurableLoop<SessionState, SessionEvent>, DurableSessionHandle) async throws -> Result
        ) async throws -> Result {
            do {
                if !opening { try await sessions.requireJournaled(id) }
            } catch {
                throw apiError(for: error, session: id, loop: nil, registry: registry)
            }
            while true {
                let use = try await using(id) {
                    try await registry.withLoop(for: id) { lease -> SessionUse<Result> in
                        let handle = lease.loop.state
                        guard handle.enter() else { return .retry(handle) }
                        var loop: DurableLoop<SessionState, SessionEvent>?
                        let use: SessionUse<Result>
                        do {
                            let running = try await handle.loop()
                            loop = running
                            use = .done(try await body(running, handle))
                        } catch {
                            use = .failed(apiError(for: error, session: id, loop: loop, registry: registry))
                        }
                        // Inside the registry's use: the entry cannot expire, nor be replaced,
                        // before it is taken out.
                        if handle.leave() { await handle.retire(from: registry) }
                        return use
                    }
                }
                switch use {
                case .done(let result): return result
                case .failed(let error): throw error
                case .retry(let handle): await handle.waitUntilRemoved()
                }
            }
        }

        router.put("sessions/:id") { _, context -> EditedResponse<SessionResponse> in
            let id = try sessionID(context)
            let (created, response) = try await withSession(id, opening: true) { loop, handle -> (Bool, SessionResponse) in
                let created = try await handle.opening { () async throws -> Bool in
                    guard loop.state.pharmacies == nil else { return false }
                    try await loop.sendAndWait(.opened)
                    return true
                }
                // Answer once the saved pharmacies have loaded, as without a journal.
                for await state in loop.states {
                    guard let screen = state.pharmacies else {
                        // A DELETE closed the session after it was opened, before it loaded.
                        throw APIError.sessionClosed(id)
                    }
                    if screen != .loading {
                        return (created, SessionResponse(session: id, state: screen, journaled: state, sequence: loop.sequence))
                    }
                }
                // The loop stopped: shutdown, or a lost lease.
                throw DurableSessionHandle.Unavailable.closed
            }
            return EditedResponse(status: created ? .created : .ok, response: response)
        }

        router.get("sessions/:id") { _, context -> SessionResponse in
            let id = try sessionID(context)
            let answer = try await withSession(id, opening: false) { loop, _ -> SessionResponse? in
                let state = loop.state
                return state.pharmacies.map {
                    SessionResponse(session: id, state: $0, journaled: state, sequence: loop.sequence)
                }
            }
            guard let answer else { throw APIError.sessionNotFound(id) }
            return answer
        }

        router.post("sessions/:id/events") { request, context -> SessionResponse in
            let id = try sessionID(context)
            let (clientEvent, number) = try await ClientEvent.decodeNumbered(request, maximumBodySize: limits.maximumBodySize)
            guard let event = clientEvent.event(mapPlaces: mapPlaces) else { throw APIError.unknownPlace }
            let answer = try await withSession(id, opening: false) { loop, _ -> SessionResponse? in
                guard loop.state.pharmacies != nil else { return nil }
                let state = try await loop.sendAndWait(.clientRequest(event, number: number))
                // A close journaled just before this request leaves it unapplied.
                return state.pharmacies.map {
                    SessionResponse(session: id, state: $0, journaled: state, sequence: loop.sequence)
                }
            }
            guard let answer else { throw APIError.sessionNotFound(id) }
            return answer
        }

        router.delete("sessions/:id") { _, context -> SessionResponse in
            let id = try sessionID(context)
            let answer = try await withSession(id, opening: false) { loop, _ -> SessionResponse? in
                guard loop.state.pharmacies != nil else { return nil }
                // The state the close found: a request journaled before it is in it, even one
                // whose answer is still on its way.
                let closed = try await loop.sendAndWait(.closed)
                return closed.finalScreen.map {
                    SessionResponse(session: id, state: $0, journaled: closed, sequence: loop.sequence)
                }
            }
            guard let answer else { throw APIError.sessionNotFound(id) }
            return answer
        }
    }

    /// How one request's use of a session's registry entry went.
    enum SessionUse<Result: Sendable>: Sendable {
        case done(Result)
        case failed(any Error)
        /// The entry was retired just before this request came in: use the session's next entry.
        case retry(DurableSessionHandle)
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
            // Stopped on its own (a lost lease, a fenced or failed append) or by shutdown. A
            // request holds the session's entry, so neither an expiry nor a retirement stops it.
            if let failure = loop?.failure { return apiError(for: failure, session: id, loop: nil, registry: registry) }
            return registry.isAcceptingLoops ? APIError.internalError : APIError.shuttingDown
        default:
            return APIError.journalUnavailable("\(error)")
        }
    }
}
