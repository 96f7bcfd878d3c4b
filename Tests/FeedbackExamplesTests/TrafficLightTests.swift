import FeedbackExamples
import FeedbackLoop
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

    struct Light {
        let clock = SleepCountingClock()
        let recorder = Recorder<TrafficLight.State, TrafficLight.Event>()
        let loop: Loop<TrafficLight.State, TrafficLight.Event>

        init(_ backend: Backend) {
            loop = TrafficLight.makeLoop(
                environment: .init(clock: clock, timing: TrafficLightTests.timing), backend: backend,
                instrumentation: recorder.instrumentation)
        }
    }

    @Test("each light stays lit for its own time, cycle after cycle", arguments: Backend.allCases)
    func cycles(_ backend: Backend) async throws {
        let light = Light(backend)
        #expect(light.loop.state == .red)
        var sleeps = 0
        var expected: [TrafficLight.State] = []
        for _ in 1...2 {
            for (current, duration, next) in [
                (TrafficLight.State.red, Self.timing.red, TrafficLight.State.yellow),
                (.yellow, Self.timing.yellow, .green), (.green, Self.timing.green, .red),
            ] {
                sleeps += 1
                try await light.clock.waitForSleeps(started: sleeps)
                await light.clock.advance(by: duration - .milliseconds(1))
                #expect(light.recorder.last ?? .red == current, "\(current) lasts \(duration)")
                await light.clock.advance(by: .milliseconds(1))
                expected.append(next)
                try await light.recorder.waitForTransitions(expected.count)
                #expect(light.recorder.states == expected)
            }
        }
        await light.loop.stop()
        #expect(light.loop.statistics.effectsRunning == 0)
    }

    @Test("a manual next moves on at once and the new light gets its full time", arguments: Backend.allCases)
    func manualNext(_ backend: Backend) async throws {
        let light = Light(backend)
        try await light.clock.waitForSleeps(started: 1)
        await light.clock.advance(by: .seconds(2))
        #expect(try await light.loop.sendAndWait(.next) == .yellow)
        // The red timer was cancelled; the yellow one runs from now.
        try await light.clock.waitForSleeps(started: 2)
        await light.clock.advance(by: Self.timing.yellow - .milliseconds(1))
        #expect(light.recorder.last == .yellow)
        await light.clock.advance(by: .milliseconds(1))
        try await light.recorder.waitForTransitions(2)
        #expect(light.recorder.states == [.yellow, .green])
        #expect(light.recorder.events == [.next, .next])
        await light.loop.stop()
    }
}
