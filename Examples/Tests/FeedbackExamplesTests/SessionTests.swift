import FeedbackExamples
import FeedbackLoop
import FeedbackLoopTesting
import Testing

/// The login screen and the pharmacies screen composed unchanged: each lives in its case of the
/// session, and the pharmacies' effects end when the user signs out.
@Suite("Session: login hosting pharmacies")
struct SessionTests {
    typealias State = Session.State

    func makeLoop(
        _ backend: Backend,
        pharmacies: any PharmaciesService = FakePharmaciesService(saved: FakePharmaciesService.sampleSaved),
        initial: State = Session.initialState
    ) -> TestLoop<State, Session.Event> {
        TestLoop(
            initial: initial,
            reduce: Session.reduce,
            feedbacks: Session.feedbacks(.init(login: .init(service: FakeLoginService()), pharmacies: .init(service: pharmacies))),
            backend: backend, timeout: exampleTimeout)
    }

    static let typed = State.signedOut(Login.State(username: "ada", password: "lovelace"))
    static let attempt = Login.Request(attempt: 1, username: "ada", password: "lovelace")

    @Test(arguments: Backend.allCases)
    func signingInOpensThePharmaciesWhichLoad(backend: Backend) async {
        let loop = makeLoop(backend)
        await loop.send(.login(.usernameChanged("ada"))) { $0 = .signedOut(Login.State(username: "ada")) }
        await loop.send(.login(.passwordChanged("lovelace"))) { $0 = Self.typed }
        await loop.send(.login(.loginTapped)) {
            $0 = .signedOut(Login.State(username: "ada", password: "lovelace", status: .loggingIn(Self.attempt), attempts: 1))
        }
        await loop.receive(.login(.loginAnswered(attempt: 1, authorized: true))) {
            $0 = .signedIn(Session.SignedIn(username: "ada", pharmacies: .loading))
        }
        await loop.receive(.pharmacies(.didLoad(FakePharmaciesService.sampleSaved))) {
            $0 = .signedIn(Session.SignedIn(username: "ada", pharmacies: .loaded(FakePharmaciesService.sampleSaved, nil)))
        }
        await loop.send(.signOut) { $0 = .signedOut(Login.State(username: "ada")) }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func signingOutWhileLoadingCancelsTheFetchAndItsLateAnswerNeverLands(backend: Backend) async {
        let service = HeldPharmacies(honoursCancellation: false)
        let loop = makeLoop(backend, pharmacies: service, initial: .signedIn(Session.SignedIn(username: "ada")))
        await service.fetches.waitForCalls(1)
        await loop.send(.signOut) { $0 = .signedOut(Login.State(username: "ada")) }
        await service.fetches.waitForCancellation(of: 0)

        service.fetches.answer(0, with: FakePharmaciesService.sampleSaved)
        await loop.loop.waitUntilIdle()
        #expect(loop.loop.state == .signedOut(Login.State(username: "ada")))
        #expect(loop.loop.statistics.eventsDroppedFromCancelledEffects == 1, "the late didLoad was dropped")
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func anEventForTheScreenThatIsGoneIsOrphaned(backend: Backend) async {
        let loop = makeLoop(backend)
        await loop.send(.pharmacies(.ui(.retry)))
        await loop.send(.pharmacies(.didLoad([])))
        #expect(loop.loop.statistics.eventsOrphaned == 2)
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func signingInAgainOpensAFreshScreen(backend: Backend) async {
        let service = HeldPharmacies()
        let loop = makeLoop(backend, pharmacies: service, initial: .signedIn(Session.SignedIn(username: "ada")))
        await service.fetches.waitForCalls(1)
        await loop.send(.signOut) { $0 = .signedOut(Login.State(username: "ada")) }
        await service.fetches.waitForCancellation(of: 0)
        await loop.send(.login(.passwordChanged("lovelace"))) { $0 = Self.typed }
        await loop.send(.login(.loginTapped)) {
            $0 = .signedOut(Login.State(username: "ada", password: "lovelace", status: .loggingIn(Self.attempt), attempts: 1))
        }
        await loop.receive(.login(.loginAnswered(attempt: 1, authorized: true))) {
            $0 = .signedIn(Session.SignedIn(username: "ada", pharmacies: .loading))
        }
        await service.fetches.waitForCalls(2)
        service.fetches.answer(1, with: [])
        await loop.receive(.pharmacies(.didLoad([]))) {
            $0 = .signedIn(Session.SignedIn(username: "ada", pharmacies: .loaded([], nil)))
        }
        await loop.finish()
    }
}
