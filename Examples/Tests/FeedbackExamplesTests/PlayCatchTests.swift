import Clocks
import FeedbackExamples
import FeedbackLoop
import FeedbackLoopTesting
import Testing

@Suite("Play catch: the machine throws back on a timer")
struct PlayCatchTests {
    @Test("only whoever holds the ball can throw it")
    func reducer() {
        var state = PlayCatch.initialState
        #expect(state == .humanHasIt)
        PlayCatch.reduce(&state, .throwToHuman)
        #expect(state == .humanHasIt)
        PlayCatch.reduce(&state, .throwToMachine)
        #expect(state == .machineHasIt)
        #expect(state.machinePitching)
        PlayCatch.reduce(&state, .throwToMachine)
        #expect(state == .machineHasIt)
        PlayCatch.reduce(&state, .throwToHuman)
        #expect(state == .humanHasIt)
    }

    @Test("the machine holds the ball for its delay, then throws it back", arguments: Backend.allCases)
    func machineThrowsBack(_ backend: Backend) async {
        let clock = TestClock()
        let loop = TestLoop(
            initial: PlayCatch.initialState,
            reduce: PlayCatch.reduce,
            feedbacks: PlayCatch.feedbacks(.init(clock: clock, machineDelay: .seconds(1))),
            backend: backend, timeout: exampleTimeout)
        await loop.loop.waitUntilIdle()
        #expect(loop.loop.statistics.effectsStarted == 0, "the machine waits for the ball")

        for round in 1...3 {
            await loop.send(.throwToMachine) { $0 = .machineHasIt }
            // A second throw while the machine has the ball changes nothing.
            await loop.send(.throwToMachine)
            await loop.advance(clock, by: .milliseconds(999))
            #expect(loop.transitions.count == 3 * round - 1, "the machine holds the ball for a second")
            await clock.advance(by: .milliseconds(1))
            await loop.receive(.throwToHuman) { $0 = .humanHasIt }
        }
        #expect(
            loop.transitions.map(\.event)
                == Array(repeating: [.throwToMachine, .throwToMachine, .throwToHuman], count: 3).flatMap { $0 })
        await loop.finish()
    }
}
