import Clocks
import FeedbackLoop
import FeedbackLoopTesting
import Testing

/// Correct scripts pass: the test loop checks exactly what happened, on both backends.
@Suite(.timeLimit(.minutes(5))) struct TestLoopTests {
    @Test(arguments: Backend.allCases)
    func sentEventsAreAssertedWithTheirExactMutation(backend: Backend) async {
        let loop = Ticker.testLoop(backend: backend)
        await loop.send(.increment) { $0.count = 1 }
        await loop.send(.increment) { $0.count = 2 }
        await loop.send(.noop)
        #expect(loop.state == Ticker.State(count: 2))
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func timerTicksAreReceivedAsTheTestClockAdvances(backend: Backend) async {
        let clock = TestClock()
        let loop = Ticker.testLoop(clock: clock, backend: backend)

        await loop.send(.start) { $0.isTicking = true }
        await loop.advance(clock, by: .seconds(1))
        await loop.receive(.tick) { $0.count = 1 }
        await loop.advance(clock, by: .seconds(1))
        await loop.receive(.tick) { $0.count = 2 }
        await loop.send(.stop) { $0.isTicking = false }
        // The timer is cancelled: time passing sends nothing more.
        await clock.advance(by: .seconds(10))
        await loop.finish()
        #expect(loop.state == Ticker.State(count: 2, isTicking: false))
    }

    @Test(arguments: Backend.allCases)
    func tenMinutesOfTicksTakeNoTimeToSpeakOf(backend: Backend) async {
        let clock = TestClock()
        let loop = Ticker.testLoop(clock: clock, backend: backend)

        await loop.send(.start) { $0.isTicking = true }
        for second in 1...600 {
            await loop.advance(clock, by: .seconds(1))
            await loop.receive(.tick) { $0.count = second }
        }
        await loop.send(.stop) { $0.isTicking = false }
        await loop.finish()

        // 600 simulated seconds, every tick received: the ticks came from the test clock, not
        // from waiting (wall time is never asserted: a loaded machine would fail it).
        #expect(loop.state.count == 600)
    }

    @Test(arguments: Backend.allCases)
    func aLoaderReceivesTheServiceAnswer(backend: Backend) async {
        let loop = TestLoop(
            initial: Loader.State(), reduce: Loader.reduce,
            feedbacks: Loader.feedbacks { attempt in
                guard attempt > 1 else { throw Loader.ServiceError() }
                return ["Boots", "Lloyds"]
            },
            backend: backend, timeout: suiteTimeout)

        await loop.send(.load) {
            $0.phase = .loading
            $0.attempts = 1
        }
        await loop.receive(.failed("offline")) { $0.phase = .failed("offline") }
        await loop.send(.load) {
            $0.phase = .loading
            $0.attempts = 2
        }
        await loop.receive(.loaded(["Boots", "Lloyds"])) { $0.phase = .loaded(["Boots", "Lloyds"]) }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func receiveWithAPredicateAcceptsEventsTheTestCannotSpellOut(backend: Backend) async {
        let loop = TestLoop(
            initial: Loader.State(), reduce: Loader.reduce,
            feedbacks: Loader.feedbacks { _ in throw Loader.ServiceError() }, backend: backend, timeout: suiteTimeout)
        await loop.send(.load) {
            $0.phase = .loading
            $0.attempts = 1
        }
        await loop.receive(where: { if case .failed = $0 { true } else { false } }) {
            $0.phase = .failed("offline")
        }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func feedbacksThatStartWithTheInitialStateAreReceivedToo(backend: Backend) async {
        let loop = TestLoop(
            initial: Loader.State(phase: .loading, attempts: 1), reduce: Loader.reduce,
            feedbacks: Loader.feedbacks { _ in ["Boots"] }, backend: backend, timeout: suiteTimeout)
        await loop.receive(.loaded(["Boots"])) { $0.phase = .loaded(["Boots"]) }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func transitionsListEveryStepOfTheScenario(backend: Backend) async {
        let loop = Loader.testLoop(backend: backend)
        await loop.send(.load) {
            $0.phase = .loading
            $0.attempts = 1
        }
        await loop.receive(.loaded(["Boots"])) { $0.phase = .loaded(["Boots"]) }
        await loop.finish()
        #expect(loop.transitions.map(\.event) == [.load, .loaded(["Boots"])])
        #expect(loop.transitions.map(\.after.phase) == [.loading, .loaded(["Boots"])])
    }
}
