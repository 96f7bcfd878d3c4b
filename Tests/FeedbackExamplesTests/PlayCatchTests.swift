import FeedbackExamples
import FeedbackLoop
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
    func machineThrowsBack(_ backend: Backend) async throws {
        let clock = SleepCountingClock()
        let recorder = Recorder<PlayCatch.State, PlayCatch.Event>()
        let loop = PlayCatch.makeLoop(
            environment: .init(clock: clock, machineDelay: .seconds(1)), backend: backend,
            instrumentation: recorder.instrumentation)
        await loop.waitUntilIdle()
        #expect(clock.started == 0, "the machine waits for the ball")

        for round in 1...3 {
            try await loop.sendAndWait(.throwToMachine)
            try await clock.waitForSleeps(started: round)
            try await loop.sendAndWait(.throwToMachine)
            await clock.advance(by: .milliseconds(999))
            #expect(recorder.last == .machineHasIt)
            await clock.advance(by: .milliseconds(1))
            await loop.waitUntilIdle()
            #expect(loop.state == .humanHasIt)
        }
        #expect(
            recorder.events == Array(repeating: [.throwToMachine, .throwToMachine, .throwToHuman], count: 3).flatMap { $0 })
        #expect(recorder.states == Array(repeating: [.machineHasIt, .machineHasIt, .humanHasIt], count: 3).flatMap { $0 })
    }
}
