import Clocks
import FeedbackExamples
import FeedbackLoop
import FeedbackLoopTesting
import Testing

@Suite("Traffic light: red → yellow → green on timers, in zero wall time")
struct TrafficLightTests {
    static let timing = TrafficLight.Timing(red: .seconds(3), yellow: .seconds(1), green: .seconds(2))

    @Test("next cycles red → yellow → green → red")
    func reducer() {
        var state = TrafficLight.initialState
        var seen = [state]
        for _ in 1...3 {
            TrafficLight.reduce(&state, .next)
            seen.append(state)
        }
        #expect(seen == [.red, .yellow, .green, .red])
    }

    static func makeLoop(
        _ backend: Backend, clock: some Clock<Duration>
    ) -> TestLoop<TrafficLight.State, TrafficLight.Event> {
        TestLoop(
            initial: TrafficLight.initialState,
            reduce: TrafficLight.reduce,
            feedbacks: TrafficLight.feedbacks(.init(clock: clock, timing: timing)),
            backend: backend, timeout: exampleTimeout)
    }

    @Test("each light stays lit for its own time, cycle after cycle", arguments: Backend.allCases)
    func cycles(_ backend: Backend) async {
        let clock = TestClock()
        let loop = Self.makeLoop(backend, clock: clock)
        var steps = 0
        for _ in 1...2 {
            for (current, duration, next) in [
                (TrafficLight.State.red, Self.timing.red, TrafficLight.State.yellow),
                (.yellow, Self.timing.yellow, .green), (.green, Self.timing.green, .red),
            ] {
                // One timer runs at a time, and none is being cancelled: `advance` may wait for it.
                await loop.advance(clock, by: duration - .milliseconds(1))
                #expect(loop.transitions.count == steps, "\(current) lasts \(duration)")
                await clock.advance(by: .milliseconds(1))
                await loop.receive(.next) { $0 = next }
                steps += 1
            }
        }
        // A traffic light never stops: the red timer is asleep, and finishing cancels it.
        loop.exhaustivity.remove(.effects)
        await loop.finish()
        #expect(loop.loop.statistics.effectsRunning == 0)
    }

    @Test("a manual next moves on at once and the new light gets its full time", arguments: Backend.allCases)
    func manualNext(_ backend: Backend) async throws {
        // Counting sleeps tells the yellow timer's sleep from the cancelled red one's, which may
        // still be on the clock right after `next` is reduced.
        let clock = SleepCountingClock()
        let loop = Self.makeLoop(backend, clock: clock)
        try await clock.waitForSleeps(started: 1)
        await clock.advance(by: .seconds(2))
        await loop.send(.next) { $0 = .yellow }
        // The red timer was cancelled; the yellow one runs from now.
        try await clock.waitForSleeps(started: 2)
        await clock.advance(by: Self.timing.yellow - .milliseconds(1))
        #expect(loop.transitions.count == 1, "yellow lasts its full time")
        await clock.advance(by: .milliseconds(1))
        await loop.receive(.next) { $0 = .green }
        #expect(loop.transitions.map(\.event) == [.next, .next])
        loop.exhaustivity.remove(.effects)
        await loop.finish()
    }
}
