import FeedbackExamples
import FeedbackLoop
import Testing

@Suite("Login: the talk's transform(input:) redone as a loop")
struct LoginTests {
    typealias State = Login.State

    // MARK: The rules, on the reducer alone

    @Test("the button is enabled only with both fields filled and no login in flight")
    func buttonRule() {
        #expect(!State().isLoginEnabled)
        #expect(!State(username: "ada").isLoginEnabled)
        #expect(!State(password: "lovelace").isLoginEnabled)
        #expect(State(username: "ada", password: "lovelace").isLoginEnabled)
        let inFlight = State(
            username: "ada", password: "lovelace",
            status: .loggingIn(Login.Request(attempt: 1, username: "ada", password: "lovelace")), attempts: 1)
        #expect(!inFlight.isLoginEnabled)
        #expect(inFlight.isLoading)
        #expect(inFlight.statusText == "Loading...")
    }

    @Test("a tap on the disabled button does nothing")
    func disabledTap() {
        var state = State(username: "ada")
        Login.reduce(&state, .loginTapped)
        #expect(state == State(username: "ada"))

        state = State(username: "ada", password: "x")
        Login.reduce(&state, .loginTapped)
        let inFlight = state
        Login.reduce(&state, .loginTapped)
        #expect(state == inFlight, "no second attempt while one is in flight")
    }

    @Test("answers become Success, Unauthorized or an error status; stale answers are ignored")
    func answers() {
        var state = State(username: "ada", password: "x")
        Login.reduce(&state, .loginTapped)
        #expect(state.request == Login.Request(attempt: 1, username: "ada", password: "x"))
        var refused = state
        Login.reduce(&refused, .loginAnswered(attempt: 1, authorized: false))
        #expect(refused.statusText == "Unauthorized")
        #expect(refused.isLoginEnabled)
        var failed = state
        Login.reduce(&failed, .loginFailed(attempt: 1, message: "offline"))
        #expect(failed.statusText == "Error: offline")
        #expect(failed.isLoginEnabled)
        var stale = state
        Login.reduce(&stale, .loginAnswered(attempt: 7, authorized: true))
        #expect(stale == state)
        Login.reduce(&state, .loginAnswered(attempt: 1, authorized: true))
        #expect(state.status == .succeeded(username: "ada"))
        #expect(state.statusText == "Success")
    }

    @Test("editing a field abandons the login in flight; it keeps other statuses")
    func editingAbandons() {
        var state = State(username: "ada", password: "x")
        Login.reduce(&state, .loginTapped)
        Login.reduce(&state, .passwordChanged("y"))
        #expect(state.status == .idle)
        #expect(state.isLoginEnabled)
        Login.reduce(&state, .loginTapped)
        #expect(state.request?.attempt == 2)
        Login.reduce(&state, .loginAnswered(attempt: 2, authorized: false))
        Login.reduce(&state, .usernameChanged("bob"))
        #expect(state.status == .unauthorized)
    }

    // MARK: On a loop

    struct Screen {
        let clock = SleepCountingClock()
        let service: FakeLoginService
        let loop: Loop<State, Login.Event>

        init(_ backend: Backend, latency: Duration = .seconds(1), failing: Int = 0) {
            service = FakeLoginService(accounts: ["ada": "lovelace"], latency: latency, clock: clock, failing: failing)
            loop = Login.makeLoop(environment: .init(service: service), backend: backend)
        }

        func type(_ username: String, _ password: String) async throws {
            try await loop.sendAndWait(.usernameChanged(username))
            try await loop.sendAndWait(.passwordChanged(password))
        }

        /// Taps Sign In, lets the service answer, and returns the state afterwards.
        func login() async throws -> State {
            let sleeps = clock.started
            #expect(try await loop.sendAndWait(.loginTapped).statusText == "Loading...")
            try await clock.waitForSleeps(started: sleeps + 1)
            await clock.advance(by: .seconds(1))
            await loop.waitUntilIdle()
            return loop.state
        }
    }

    @Test("valid credentials: Loading... then Success", arguments: Backend.allCases)
    func success(_ backend: Backend) async throws {
        let screen = Screen(backend)
        try await screen.type("ada", "lovelace")
        let state = try await screen.login()
        #expect(state.status == .succeeded(username: "ada"))
        #expect(state.isLoginEnabled)
    }

    @Test("wrong password: Unauthorized", arguments: Backend.allCases)
    func unauthorized(_ backend: Backend) async throws {
        let screen = Screen(backend)
        try await screen.type("ada", "babbage")
        #expect(try await screen.login().statusText == "Unauthorized")
    }

    @Test("a service error becomes a status, and the next attempt can succeed", arguments: Backend.allCases)
    func serviceError(_ backend: Backend) async throws {
        let screen = Screen(backend, failing: 1)
        try await screen.type("ada", "lovelace")
        let failed = try await screen.login()
        #expect(failed.status == .failed(String(describing: FakeServiceError(operation: "login"))))
        #expect(failed.isLoginEnabled)
        #expect(try await screen.login().status == .succeeded(username: "ada"))
    }

    @Test("a new attempt cancels the one in flight: its late answer never lands", arguments: Backend.allCases)
    func newAttemptCancelsTheOldOne(_ backend: Backend) async throws {
        let screen = Screen(backend)
        try await screen.type("ada", "babbage")
        #expect(try await screen.loop.sendAndWait(.loginTapped).request?.attempt == 1)
        try await screen.clock.waitForSleeps(started: 1)
        #expect(
            try await screen.loop.sendAndWait(.loginTapped).request?.attempt == 1, "the disabled button starts nothing")

        try await screen.loop.sendAndWait(.passwordChanged("lovelace"))
        let retried = try await screen.loop.sendAndWait(.loginTapped)
        #expect(retried.request == Login.Request(attempt: 2, username: "ada", password: "lovelace"))
        try await screen.clock.waitForSleeps(started: 2)
        #expect(screen.service.server.calls == [FakeCall(operation: .login, outcome: .cancelled)])

        await screen.clock.advance(by: .seconds(1))
        await screen.loop.waitUntilIdle()
        #expect(screen.loop.state.status == .succeeded(username: "ada"))
        #expect(
            screen.service.server.calls == [
                FakeCall(operation: .login, outcome: .cancelled), FakeCall(operation: .login, outcome: .succeeded),
            ])
    }
}
