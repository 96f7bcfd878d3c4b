import FeedbackLoop

/// The login screen of the talk "Managing state in reactive applications", whose Rx
/// `transform(input:)` tangles a relay, a zip, a `flatMapLatest` and side effects in `do`
/// operators. As a loop it is one state and a reducer, and the rules read as code:
///
/// - the button is enabled only with both fields filled and no login in flight
///   (``State/isLoginEnabled``); a tap on a disabled button does nothing;
/// - while a login is in flight the status is "Loading...", then "Success" or "Unauthorized";
/// - a new attempt cancels the one in flight: each attempt has its own number, and the login
///   feedback keeps one request running for the current attempt only. Editing a field while a
///   login is in flight abandons it — it was checking credentials no longer on screen — so the
///   button is enabled again and the next tap starts a new attempt;
/// - a service error becomes a status the user can read, never a crash or a stuck spinner.
public enum Login: ExampleFeature {
    /// What the feedback needs.
    public struct Environment: Sendable {
        public var service: any LoginService

        public init(service: any LoginService) {
            self.service = service
        }
    }

    /// One login attempt: the credentials it checks and its number, unique within the screen.
    public struct Request: Hashable, Sendable, Codable {
        public var attempt: Int
        public var username: String
        public var password: String

        public init(attempt: Int, username: String, password: String) {
            self.attempt = attempt
            self.username = username
            self.password = password
        }
    }

    /// Where the last login attempt stands.
    public enum Status: Hashable, Sendable, Codable {
        /// No attempt yet, or the last one was abandoned.
        case idle
        case loggingIn(Request)
        case succeeded(username: String)
        case unauthorized
        /// The service failed; the message says why.
        case failed(String)
    }

    /// The two fields and where the last attempt stands; the button, the spinner and the status
    /// text are derived from it.
    public struct State: Hashable, Sendable, Codable, CustomStringConvertible {
        public var username: String
        public var password: String
        public var status: Status
        /// How many attempts were started; numbers the next one.
        public var attempts: Int

        public init(username: String = "", password: String = "", status: Status = .idle, attempts: Int = 0) {
            self.username = username
            self.password = password
            self.status = status
            self.attempts = attempts
        }

        /// The attempt in flight, if any: the query of the login feedback.
        public var request: Request? {
            if case .loggingIn(let request) = status { request } else { nil }
        }

        /// The talk's `loginButtonEnabled`.
        public var isLoginEnabled: Bool {
            request == nil && !username.isEmpty && !password.isEmpty
        }

        /// The talk's `loading`.
        public var isLoading: Bool { request != nil }

        /// The talk's `statusText`.
        public var statusText: String {
            switch status {
            case .idle: ""
            case .loggingIn: "Loading..."
            case .succeeded: "Success"
            case .unauthorized: "Unauthorized"
            case .failed(let message): "Error: \(message)"
            }
        }

        public var description: String {
            let password = String(repeating: "•", count: password.count)
            let button = isLoginEnabled ? "enabled" : "disabled"
            let status = statusText.isEmpty ? "" : ", status \"\(statusText)\""
            return "username \"\(username)\", password \"\(password)\", button \(button)\(status)"
        }
    }

    /// The user's typing and taps, and the service's answers tagged with their attempt.
    public enum Event: Hashable, Sendable, Codable, CustomStringConvertible {
        case usernameChanged(String)
        case passwordChanged(String)
        case loginTapped
        /// The service answered attempt `attempt`: valid credentials or not.
        case loginAnswered(attempt: Int, authorized: Bool)
        /// The service failed for attempt `attempt`.
        case loginFailed(attempt: Int, message: String)

        public var description: String {
            switch self {
            case .usernameChanged(let text): "user: typed username \"\(text)\""
            case .passwordChanged(let text): "user: typed a password of \(text.count) characters"
            case .loginTapped: "user: tapped Sign In"
            case .loginAnswered(let attempt, let authorized):
                "service: attempt \(attempt) \(authorized ? "authorized" : "refused")"
            case .loginFailed(let attempt, let message): "service: attempt \(attempt) failed: \(message)"
            }
        }
    }

    public static var initialState: State { State() }

    /// Applies the rules listed on ``Login``. An answer for any attempt but the one in flight is
    /// ignored, so even an answer that raced a cancellation cannot change the status.
    public static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .usernameChanged(let text):
            state.username = text
            abandonLoginInFlight(&state)
        case .passwordChanged(let text):
            state.password = text
            abandonLoginInFlight(&state)
        case .loginTapped:
            guard state.isLoginEnabled else { return }
            state.attempts += 1
            state.status = .loggingIn(
                Request(attempt: state.attempts, username: state.username, password: state.password))
        case .loginAnswered(let attempt, let authorized):
            guard state.request?.attempt == attempt else { return }
            state.status = authorized ? .succeeded(username: state.username) : .unauthorized
        case .loginFailed(let attempt, let message):
            guard state.request?.attempt == attempt else { return }
            state.status = .failed(message)
        }
    }

    private static func abandonLoginInFlight(_ state: inout State) {
        if state.request != nil { state.status = .idle }
    }

    /// One feedback does what the talk's `flatMapLatest` and its `do` operators did: while an
    /// attempt is in flight, ask the service, and cancel the request when the attempt is replaced
    /// or abandoned.
    public static func feedbacks(_ environment: Environment) -> [Feedback<State, Event>] {
        let service = environment.service
        return [
            .skippingRepeated(\.request) { request in
                .run { send in
                    do {
                        let authorized = try await service.login(username: request.username, password: request.password)
                        send(.loginAnswered(attempt: request.attempt, authorized: authorized))
                    } catch {
                        send(.loginFailed(attempt: request.attempt, message: String(describing: error)))
                    }
                }
            }
        ]
    }
}
