import FeedbackLoop

/// Two of the articles' features composed, each unchanged: the talk's ``Login`` screen while
/// signed out, and once the login succeeds, the article's ``Pharmacies`` screen for the
/// signed-in user.
///
/// The state is an enum with one child in each case, so each child exists exactly as long as its
/// case: signing in creates the pharmacies screen (which starts loading), signing out discards it
/// and cancels whatever it was doing — a fetch in flight is cancelled and its late answer is
/// dropped, never shown to the next user. An event for the screen that is not there (a late tap,
/// a stale message) is dropped and counted in the loop's `LoopStatistics.eventsOrphaned`.
///
/// ```swift
/// let loop = Session.makeLoop(environment: .init(login: …, pharmacies: …), backend: .actor)
/// loop.send(.login(.usernameChanged("ada"))); loop.send(.login(.passwordChanged("lovelace")))
/// loop.send(.login(.loginTapped))    // → signed in as ada, pharmacies loading → loaded
/// loop.send(.signOut)                // → signed out; the pharmacies' effects are cancelled
/// ```
public enum Session: ExampleFeature {
    /// The dependencies of both screens.
    public struct Environment: Sendable {
        public var login: Login.Environment
        public var pharmacies: Pharmacies.Environment

        public init(login: Login.Environment, pharmacies: Pharmacies.Environment) {
            self.login = login
            self.pharmacies = pharmacies
        }
    }

    /// Signed out, on the login screen, or signed in, on the pharmacies screen.
    public enum State: Hashable, Sendable, CustomStringConvertible {
        case signedOut(Login.State)
        case signedIn(SignedIn)

        public var description: String {
            switch self {
            case .signedOut(let login): "signed out: \(login)"
            case .signedIn(let session): "signed in as \(session.username): \(session.pharmacies)"
            }
        }
    }

    /// Who signed in, and their pharmacies screen.
    public struct SignedIn: Hashable, Sendable {
        public var username: String
        public var pharmacies: Pharmacies.State

        public init(username: String, pharmacies: Pharmacies.State = Pharmacies.initialState) {
            self.username = username
            self.pharmacies = pharmacies
        }
    }

    /// The two screens' events, and signing out.
    public enum Event: Hashable, Sendable, CustomStringConvertible {
        case login(Login.Event)
        case pharmacies(Pharmacies.Event)
        case signOut

        public var description: String {
            switch self {
            case .login(let event): "login: \(event)"
            case .pharmacies(let event): "pharmacies: \(event)"
            case .signOut: "user: signed out"
            }
        }
    }

    public static var initialState: State { .signedOut(Login.State()) }

    /// The login screen lives in the `signedOut` case.
    public static let login = ChildScope(
        state: StatePath(extract: { if case .signedOut(let login) = $0 { login } else { nil } }, embed: State.signedOut),
        event: EventPath(embed: Event.login, extract: { if case .login(let event) = $0 { event } else { nil } }))

    // snippet.composition
    /// The pharmacies screen lives in the `signedIn` case, one level down.
    public static let pharmacies = ChildScope(
        state: StatePath(extract: { if case .signedIn(let session) = $0 { session } else { nil } }, embed: State.signedIn)
            .appending(StatePath(\SignedIn.pharmacies)),
        event: EventPath(embed: Event.pharmacies, extract: { if case .pharmacies(let event) = $0 { event } else { nil } }))

    /// Each screen's own reducer on its own events; then the session's rules: a successful login
    /// signs in, signing out returns to the login screen with the username filled in.
    public static func reduce(_ state: inout State, _ event: Event) {
        login.reduce(&state, event, with: Login.reduce)
        pharmacies.reduce(&state, event, with: Pharmacies.reduce)
        switch (state, event) {
        case (.signedOut(let login), .login):
            if case .succeeded(let username) = login.status {
                state = .signedIn(SignedIn(username: username))
            }
        case (.signedIn(let session), .signOut):
            state = .signedOut(Login.State(username: session.username))
        default:
            break
        }
    }

    /// Each screen's feedbacks, lifted: they run only while their screen exists.
    public static func feedbacks(_ environment: Environment) -> [Feedback<State, Event>] {
        [
            login.feedback(Login.feedbacks(environment.login)),
            pharmacies.feedback(Pharmacies.feedbacks(environment.pharmacies)),
        ]
    }
    // snippet.end
}
