import Clocks
import FeedbackLoop
import FeedbackLoopTesting
import Testing

/// Wrong scripts fail, with a message that says why, at the line of the call that found it.
@Suite(.timeLimit(.minutes(5))) struct TestLoopFailureTests {
    @Test(arguments: Backend.allCases)
    func aWrongMutationFailsWithADiffAtTheCallersLine(backend: Backend) async {
        let loop = Ticker.testLoop(backend: backend)
        let line = #line + 3
        await withKnownIssue {
            // The test says 2; the reducer makes 1.
            await loop.send(.increment) { $0.count = 2 }
        } matching: { issue in
            let text = issue.comments.map(\.rawValue).joined()
            return issue.sourceLocation?.line == line
                && text.contains("does not match the expectation")
                && text.contains("−   count: 2")
                && text.contains("+   count: 1")
        }
        // The test loop moves on with the actual state.
        #expect(loop.state.count == 1)
        await loop.send(.increment) { $0.count = 2 }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func aChangeThatWasNotAssertedFails(backend: Backend) async {
        let loop = Ticker.testLoop(backend: backend)
        await expectIssues(mentioning: "no change was asserted", "count") {
            await loop.send(.increment)
        }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func aPartlyAssertedChangeFails(backend: Backend) async {
        let loop = TestLoop(
            initial: Loader.State(), reduce: Loader.reduce, feedbacks: Loader.feedbacks { _ in [] }, backend: backend)
        await expectIssues(mentioning: "attempts") {
            await loop.send(.load) { $0.phase = .loading }
        }
        await loop.receive(.loaded([])) { $0.phase = .loaded([]) }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func anAssertionOfAChangeThatDidNotHappenFails(backend: Backend) async {
        let loop = Ticker.testLoop(backend: backend)
        await expectIssues(mentioning: "did not change") {
            await loop.send(.noop) { $0.count = 0 }
        }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func receivingAnotherEventThanTheOneThatArrivedFails(backend: Backend) async {
        let loop = Loader.testLoop(backend: backend)
        await loop.send(.load) {
            $0.phase = .loading
            $0.attempts = 1
        }
        await expectIssues(mentioning: "Expected to receive", "received", "Boots") {
            await loop.receive(.failed("offline")) { $0.phase = .failed("offline") }
        }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func sendingWhileAnEffectEventIsUnreceivedFails(backend: Backend) async {
        let clock = TestClock()
        let loop = Ticker.testLoop(clock: clock, backend: backend)
        await loop.send(.start) { $0.isTicking = true }
        await loop.advance(clock, by: .seconds(1))
        // Let the tick be reduced without asserting it, so the next send finds it pending.
        await loop.loop.firstState { $0.count == 1 }
        await expectIssues(mentioning: "must be received before sending", "tick") {
            await loop.send(.stop) { $0.isTicking = false }
        }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func anEventThatNeverComesFailsAfterTheTimeout(backend: Backend) async {
        let clock = TestClock()
        let loop = Ticker.testLoop(clock: clock, backend: backend)
        await loop.send(.start) { $0.isTicking = true }
        // The clock is not advanced, so no tick comes.
        await expectIssues(mentioning: "no event arrived within", "advance the clock") {
            await loop.receive(.tick, timeout: .milliseconds(50)) { $0.count = 1 }
        }
        await loop.send(.stop) { $0.isTicking = false }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func anEffectStillRunningAtTheEndFails(backend: Backend) async {
        let clock = TestClock()
        let loop = Ticker.testLoop(clock: clock, backend: backend)
        await loop.send(.start) { $0.isTicking = true }
        await expectIssues(mentioning: "1 effect(s) still running", "feedback 0 (effect", "did not become idle") {
            await loop.finish(timeout: .milliseconds(50))
        }
        // finish stopped the loop and cancelled the timer.
        #expect(loop.loop.statistics.effectsRunning == 0)
    }

    @Test(arguments: Backend.allCases)
    func anEventNotReceivedByTheEndFails(backend: Backend) async {
        let loop = Loader.testLoop(backend: backend)
        await loop.send(.load) {
            $0.phase = .loading
            $0.attempts = 1
        }
        await expectIssues(mentioning: "not received", "Boots") {
            await loop.finish()
        }
    }

    @Test(arguments: Backend.allCases)
    func anEffectThatThrowsFails(backend: Backend) async {
        let loop = TestLoop(
            initial: Ticker.State(), reduce: Ticker.reduce,
            feedbacks: [.whenBecomesTrue({ $0.isTicking }) { _ in .run { _ in throw Loader.ServiceError() } }],
            backend: backend)
        await loop.send(.start) { $0.isTicking = true }
        await expectIssues(mentioning: "An effect threw", "offline") {
            await loop.finish()
        }
    }

    @Test(arguments: Backend.allCases)
    func sendingAfterFinishFails(backend: Backend) async {
        let loop = Ticker.testLoop(backend: backend)
        await loop.finish()
        await expectIssues(mentioning: "after the test loop finished") {
            await loop.send(.increment) { $0.count = 1 }
        }
    }
}
