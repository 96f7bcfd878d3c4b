import FeedbackLoopTesting
import Testing

/// The first line of every failure names what failed, effects are named by their feedback's
/// label, and a wait that runs out says how long it waited and for what.
@Suite(.timeLimit(.minutes(5))) struct TestLoopHeadlineTests {
    @Test func theDefaultTimeoutIsSeconds() async {
        #expect(TestLoop<Ticker.State, Ticker.Event>.defaultTimeout == .seconds(2))
        let loop = TestLoop(initial: Ticker.State(), reduce: Ticker.reduce, backend: .callback)
        #expect(loop.timeout == .seconds(2))
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func aWrongMutationIsAStateMismatch(backend: Backend) async {
        let loop = Ticker.testLoop(backend: backend)
        await expectIssues(headline: "State mismatch: sending Ticker.Event.increment") {
            await loop.send(.increment) { $0.count = 2 }
        }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func anUnassertedChangeSaysSo(backend: Backend) async {
        let loop = Ticker.testLoop(backend: backend)
        await expectIssues(headline: "Unasserted state change: sending Ticker.Event.increment") {
            await loop.send(.increment)
        }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func anotherEventIsAnUnexpectedEvent(backend: Backend) async {
        let loop = Loader.testLoop(backend: backend)
        await loop.send(.load) {
            $0.phase = .loading
            $0.attempts = 1
        }
        await expectIssues(headline: #"Unexpected event: Loader.Event.loaded(["Boots"])"#) {
            await loop.receive(.failed("offline")) { $0.phase = .failed("offline") }
        }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func aLateEventSaysHowLongItWaitedAndForWhat(backend: Backend) async {
        let clock = TestClock()
        let loop = Ticker.testLoop(clock: clock, backend: backend, labeled: true)
        await loop.send(.start) { $0.isTicking = true }
        await expectIssues(headline: "Event not received: waited 0.05 seconds for Ticker.Event.tick", mentioning: #"Running: "ticker" (effect"#) {
            await loop.receive(.tick, timeout: .milliseconds(50)) { $0.count = 1 }
        }
        await loop.send(.stop) { $0.isTicking = false }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func anEffectStillRunningIsNamedByItsLabel(backend: Backend) async {
        let clock = TestClock()
        let loop = Ticker.testLoop(clock: clock, backend: backend, labeled: true)
        await loop.send(.start) { $0.isTicking = true }
        await expectIssues(headline: #"Effect still running at the end of the test: "ticker" (effect"#, mentioning: "waited 0.05 seconds") {
            await loop.finish(timeout: .milliseconds(50))
        }
    }

    @Test(arguments: Backend.allCases)
    func aThrowingEffectIsAnEffectFailure(backend: Backend) async {
        let loop = TestLoop(
            initial: Ticker.State(), reduce: Ticker.reduce,
            feedbacks: [
                .whenBecomesTrue({ $0.isTicking }) { _ in .run { _ in throw Loader.ServiceError() } }
                    .labeled("sync")
            ],
            backend: backend)
        await loop.send(.start) { $0.isTicking = true }
        await expectIssues(headline: #"Effect failed: "sync" (effect"#, mentioning: "offline") {
            await loop.finish()
        }
    }
}
