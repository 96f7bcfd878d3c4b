import FeedbackExamples
import FeedbackLoop
import FeedbackLoopDurable

/// A session as its journal keeps it: the pharmacies screen while the session is open, how many
/// client requests it has applied, and, once closed, the screen it was closed with.
///
/// The request count makes a lost or repeated event visible from outside: a client that numbers
/// its requests 1, 2, 3, … (the `request` field of an event's body) and sends each after the
/// previous one was answered finds `requests == lastRequest` after any crash and recovery, with
/// `lastRequest` equal to its last answered number, or one more if the server journaled a request
/// but died before answering it.
public struct SessionState: Hashable, Sendable, Codable {
    /// The screen; `nil` while the session is not open (never opened, or closed by `DELETE`).
    public var pharmacies: Pharmacies.State?
    /// Client requests applied since the session was opened.
    public var requests: Int
    /// The `request` number of the latest applied client request that carried one.
    public var lastRequest: Int?
    /// The screen as the latest ``SessionEvent/closed`` found it: set by the event that closed an
    /// open session (with ``requests`` and ``lastRequest`` kept as they were), `nil` after a close
    /// of a session that was not open, and while the session is open. A `DELETE` answers with it,
    /// so its final state is exactly what the journal held when the close was reduced: every
    /// request journaled before the close is in it, none journaled after.
    public var finalScreen: Pharmacies.State?

    /// A session that is not open.
    public init(
        pharmacies: Pharmacies.State? = nil, requests: Int = 0, lastRequest: Int? = nil,
        finalScreen: Pharmacies.State? = nil
    ) {
        self.pharmacies = pharmacies
        self.requests = requests
        self.lastRequest = lastRequest
        self.finalScreen = finalScreen
    }
}

/// What a session's journal records: every event the session's reducer sees.
public enum SessionEvent: Hashable, Sendable, Codable {
    /// `PUT`: opens the session, which starts loading its saved pharmacies. Ignored while open.
    case opened
    /// A client's request (`POST .../events`), with the client's number for it, if any. Ignored
    /// while the session is not open.
    case request(Pharmacies.Event, number: Int?)
    /// An event of the screen's own effects (the back end's answers).
    case pharmacies(Pharmacies.Event)
    /// `DELETE`, or the session's expiry: closes the session, keeping its final screen (see
    /// ``SessionState/finalScreen``).
    case closed
}

/// The durable session feature: the pharmacies screen one level down, its effects running only
/// while the session is open.
public enum DurableSession {
    static let screen = ChildScope(
        state: StatePath(\SessionState.pharmacies),
        event: EventPath<SessionEvent, Pharmacies.Event>(
            embed: { .pharmacies($0) },
            extract: { event in
                switch event {
                case .request(let event, _), .pharmacies(let event): event
                case .opened, .closed: nil
                }
            }))

    /// The screen's reducer on its events, then the session's own rules.
    @Sendable
    public static func reduce(_ state: inout SessionState, _ event: SessionEvent) {
        switch event {
        case .opened:
            if state.pharmacies == nil { state = SessionState(pharmacies: Pharmacies.initialState) }
        case .request(_, let number):
            guard state.pharmacies != nil else { return }
            screen.reduce(&state, event, with: Pharmacies.reduce)
            state.requests += 1
            if let number { state.lastRequest = number }
        case .pharmacies:
            screen.reduce(&state, event, with: Pharmacies.reduce)
        case .closed:
            state = SessionState(
                requests: state.requests, lastRequest: state.lastRequest, finalScreen: state.pharmacies)
        }
    }

    /// The screen's feedbacks, lifted: they run while the session is open.
    public static func feedbacks(_ environment: Pharmacies.Environment) -> [Feedback<SessionState, SessionEvent>] {
        [screen.feedback(Pharmacies.feedbacks(environment))]
    }
}
