import FeedbackExamples
import FeedbackLoop
import FeedbackLoopDurable

/// A session as its journal keeps it: the pharmacies screen while the session is open, how many
/// client requests it has applied, and, once closed, the screen it was closed with.
///
/// The request count makes a lost or repeated event visible from outside: a client that numbers
/// its requests 1, 2, 3, … (the `request` field of an event's body) and sends each after the
/// previous one was answered finds `clientRequests == lastRequestNumber` after any crash and
/// recovery, with `lastRequestNumber` equal to its last answered number, or one more if the
/// server journaled a request but died before answering it. (Answers name them `requests` and
/// `lastRequest`.)
///
/// Snapshots written by version 1 of the session's schema (``DurableSession/schemaVersion``),
/// where the two counters were `requests` and `lastRequest`, decode into this version.
public struct SessionState: Hashable, Sendable, Codable {
    /// The screen; `nil` while the session is not open (never opened, or closed by `DELETE`).
    public var pharmacies: Pharmacies.State?
    /// Client requests applied since the session was opened (version 1: `requests`).
    public var clientRequests: Int
    /// The `request` number of the latest applied client request that carried one (version 1:
    /// `lastRequest`).
    public var lastRequestNumber: Int?
    /// The screen as the latest ``SessionEvent/closed`` found it: set by the event that closed an
    /// open session (with ``clientRequests`` and ``lastRequestNumber`` kept as they were), `nil`
    /// after a close of a session that was not open, and while the session is open. A `DELETE`
    /// answers with it, so its final state is exactly what the journal held when the close was
    /// reduced: every request journaled before the close is in it, none journaled after.
    public var finalScreen: Pharmacies.State?

    /// A session that is not open.
    public init(
        pharmacies: Pharmacies.State? = nil, clientRequests: Int = 0, lastRequestNumber: Int? = nil,
        finalScreen: Pharmacies.State? = nil
    ) {
        self.pharmacies = pharmacies
        self.clientRequests = clientRequests
        self.lastRequestNumber = lastRequestNumber
        self.finalScreen = finalScreen
    }

    // `encode(to:)` is synthesized from these keys: the current shape.
    enum CodingKeys: String, CodingKey {
        case pharmacies, clientRequests, lastRequestNumber, finalScreen
    }

    /// Version 1's names for the two counters.
    private enum Version1Keys: String, CodingKey {
        case requests, lastRequest
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        pharmacies = try container.decodeIfPresent(Pharmacies.State.self, forKey: .pharmacies)
        finalScreen = try container.decodeIfPresent(Pharmacies.State.self, forKey: .finalScreen)
        if decoder.durableSchemaVersion == 1 {
            let version1 = try decoder.container(keyedBy: Version1Keys.self)
            clientRequests = try version1.decode(Int.self, forKey: .requests)
            lastRequestNumber = try version1.decodeIfPresent(Int.self, forKey: .lastRequest)
        } else {
            clientRequests = try container.decode(Int.self, forKey: .clientRequests)
            lastRequestNumber = try container.decodeIfPresent(Int.self, forKey: .lastRequestNumber)
        }
    }
}

/// What a session's journal records: every event the session's reducer sees.
///
/// Events written by version 1 of the session's schema (``DurableSession/schemaVersion``), where
/// ``clientRequest(_:number:)`` was `request(_:number:)`, decode into this version.
public enum SessionEvent: Hashable, Sendable, Codable {
    /// `PUT`: opens the session, which starts loading its saved pharmacies. Ignored while open.
    case opened
    /// A client's request (`POST .../events`), with the client's number for it, if any. Ignored
    /// while the session is not open. (Version 1: `request`.)
    case clientRequest(Pharmacies.Event, number: Int?)
    /// An event of the screen's own effects (the back end's answers).
    case pharmacies(Pharmacies.Event)
    /// `DELETE`, or the session's expiry: closes the session, keeping its final screen (see
    /// ``SessionState/finalScreen``).
    case closed

    /// The current shape, with Swift's synthesized coding: a twin, so that `init(from:)` can
    /// choose a shape by the record's version.
    private enum Version2: Codable {
        case opened
        case clientRequest(Pharmacies.Event, number: Int?)
        case pharmacies(Pharmacies.Event)
        case closed
    }

    /// Version 1's shape, as it was journaled.
    private enum Version1: Decodable {
        case opened
        case request(Pharmacies.Event, number: Int?)
        case pharmacies(Pharmacies.Event)
        case closed
    }

    public init(from decoder: any Decoder) throws {
        if decoder.durableSchemaVersion == 1 {
            self = switch try Version1(from: decoder) {
            case .opened: .opened
            case .request(let event, let number): .clientRequest(event, number: number)
            case .pharmacies(let event): .pharmacies(event)
            case .closed: .closed
            }
            return
        }
        self = switch try Version2(from: decoder) {
        case .opened: .opened
        case .clientRequest(let event, let number): .clientRequest(event, number: number)
        case .pharmacies(let event): .pharmacies(event)
        case .closed: .closed
        }
    }

    public func encode(to encoder: any Encoder) throws {
        let current: Version2 = switch self {
        case .opened: .opened
        case .clientRequest(let event, let number): .clientRequest(event, number: number)
        case .pharmacies(let event): .pharmacies(event)
        case .closed: .closed
        }
        try current.encode(to: encoder)
    }
}

/// The durable session feature: the pharmacies screen one level down, its effects running only
/// while the session is open.
public enum DurableSession {
    /// The schema version of the records this code journals. Version 2 renamed
    /// ``SessionEvent/clientRequest(_:number:)`` (was `request`) and the state's counters
    /// ``SessionState/clientRequests`` and ``SessionState/lastRequestNumber`` (were `requests` and
    /// `lastRequest`); both types still decode version 1's records, so that a server recovers
    /// the sessions its previous version journaled.
    public static let schemaVersion = 2

    /// The name the journal records for every session loop (`DurableConfiguration.feature`):
    /// fixed, so that renaming or versioning ``SessionState`` and ``SessionEvent`` keeps the
    /// journaled sessions theirs. The journal of version 1, which predates recorded names, takes
    /// it when the first session opens.
    public static let feature = "pharmacy-session"

    static let screen = ChildScope(
        state: StatePath(\SessionState.pharmacies),
        event: EventPath<SessionEvent, Pharmacies.Event>(
            embed: { .pharmacies($0) },
            extract: { event in
                switch event {
                case .clientRequest(let event, _), .pharmacies(let event): event
                case .opened, .closed: nil
                }
            }))

    /// The screen's reducer on its events, then the session's own rules.
    @Sendable
    public static func reduce(_ state: inout SessionState, _ event: SessionEvent) {
        switch event {
        case .opened:
            if state.pharmacies == nil { state = SessionState(pharmacies: Pharmacies.initialState) }
        case .clientRequest(_, let number):
            guard state.pharmacies != nil else { return }
            screen.reduce(&state, event, with: Pharmacies.reduce)
            state.clientRequests += 1
            if let number { state.lastRequestNumber = number }
        case .pharmacies:
            screen.reduce(&state, event, with: Pharmacies.reduce)
        case .closed:
            state = SessionState(
                clientRequests: state.clientRequests, lastRequestNumber: state.lastRequestNumber,
                finalScreen: state.pharmacies)
        }
    }

    /// The screen's feedbacks, lifted: they run while the session is open.
    public static func feedbacks(_ environment: Pharmacies.Environment) -> [Feedback<SessionState, SessionEvent>] {
        [screen.feedback(Pharmacies.feedbacks(environment))]
    }
}
