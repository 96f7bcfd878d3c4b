import Clocks
import FeedbackLoop
import FeedbackLoopTesting
import Testing

/// Each check can be relaxed on its own, and a relaxed check lets the matching script pass.
@Suite(.timeLimit(.minutes(5))) struct TestLoopExhaustivityTests {
    @Test(arguments: Backend.allCases)
    func withoutStateExhaustivityAnAssertionChecksOnlyWhatItSets(backend: Backend) async {
        let loop = Loader.testLoop(backend: backend, exhaustivity: .on.subtracting(.state))
        await loop.send(.load) { $0.phase = .loading }  // attempts also changed, unasserted
        await loop.receive(.loaded(["Boots"]))
        await loop.finish()

        // What it does set is still checked.
        let strict = TestLoop(
            initial: Loader.State(), reduce: Loader.reduce, backend: backend, exhaustivity: .on.subtracting(.state))
        await expectIssues(mentioning: "does not match the expectation") {
            await strict.send(.load) { $0.attempts = 5 }
        }
        await strict.finish()
    }

    @Test(arguments: Backend.allCases)
    func withoutReceivedEventExhaustivityReceiveSkipsToTheEventItWants(backend: Backend) async {
        let clock = TestClock()
        let loop = Ticker.testLoop(clock: clock, backend: backend, exhaustivity: .on.subtracting(.receivedEvents))
        await loop.send(.start) { $0.isTicking = true }
        for _ in 1...3 { await loop.advance(clock, by: .seconds(1)) }
        await loop.loop.firstState { $0.count == 3 }
        // Three ticks arrived; the test asserts the first, and sending skips the other two silently.
        await loop.receive(.tick) { $0.count = 1 }
        await loop.send(.stop) { $0.isTicking = false }
        #expect(loop.state.count == 3)
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func withoutEffectExhaustivityFinishCancelsWhatStillRuns(backend: Backend) async {
        let clock = TestClock()
        let loop = Ticker.testLoop(clock: clock, backend: backend)
        await loop.send(.start) { $0.isTicking = true }
        loop.exhaustivity.remove(.effects)
        // The ticker's effect waits on a TestClock nobody advances: had `finish` waited for it,
        // the test would hang until the loop's timeout and fail there.
        await loop.finish()
        #expect(loop.loop.statistics.effectsRunning == 0)
        #expect(loop.loop.statistics.effectsCancelled == 1)
    }

    @Test(arguments: Backend.allCases)
    func skippedEventsMoveTheStateOn(backend: Backend) async {
        let clock = TestClock()
        let loop = Ticker.testLoop(clock: clock, backend: backend)
        await loop.send(.start) { $0.isTicking = true }
        await loop.advance(clock, by: .seconds(1))
        await loop.receive(.tick) { $0.count = 1 }
        await loop.advance(clock, by: .seconds(1))
        await loop.loop.firstState { $0.count == 2 }
        loop.skipReceivedEvents()
        #expect(loop.state.count == 2)
        await loop.send(.stop) { $0.isTicking = false }
        await loop.finish()
    }
}
