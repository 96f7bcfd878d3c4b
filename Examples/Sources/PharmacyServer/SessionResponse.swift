import FeedbackExamples
import Hummingbird

/// The answer to every session request: the screen's state (right after the request's event was
/// reduced, for `POST .../events`), a readable summary, the list, and the route the state asks
/// for.
public struct SessionResponse: Hashable, Sendable, Codable, ResponseEncodable {
    /// The session's id.
    public var session: String
    /// The whole state, in `Pharmacies.State`'s own `Codable` form.
    public var state: Pharmacies.State
    /// `state` in words, such as `adding Superdrug to [Boots Piccadilly, Day Lewis]`.
    public var summary: String
    /// The saved pharmacies as the state knows them.
    public var pharmacies: [Pharmacy]
    /// The navigation the state asks the client for (show the map, an alert, directions…), if any.
    public var route: String?

    /// What the journal holds for a journaled session (absent without a journal).
    public var journal: Journal?

    /// A journaled session's figures.
    public struct Journal: Hashable, Sendable, Codable {
        /// The sequence number of the session's latest journaled event.
        public var sequence: UInt64
        /// Client requests applied since the session was opened (see ``SessionState``).
        public var requests: Int
        /// The `request` number of the latest applied request that carried one.
        public var lastRequest: Int?
    }

    /// The answer for a journaled session: its screen, and the journal's figures from `journaled`
    /// and `sequence`.
    init(session: String, state: Pharmacies.State, journaled: SessionState, sequence: UInt64) {
        self.init(session: session, state: state)
        self.journal = Journal(sequence: sequence, requests: journaled.clientRequests, lastRequest: journaled.lastRequestNumber)
    }

    /// The answer for `session` in `state`.
    public init(session: String, state: Pharmacies.State) {
        self.session = session
        self.state = state
        self.summary = state.description
        self.pharmacies = state.pharmacies
        self.route = Pharmacies.route(for: state)?.description
    }
}
