import FeedbackLoop
import Testing

@testable import FeedbackBenchmarkScenarios

/// Each scenario's check rejects a broken result and accepts a good one, on real loops.
@Suite struct ValidationTests {
    @Test(arguments: Backend.allCases)
    func throughputRejectsALostEvent(backend: Backend) async throws {
        let loop = Systems.counter(backend)
        for _ in 0..<9 { loop.send(1) }
        await loop.waitUntilIdle()
        #expect(throws: ScenarioFailure.self) { try ThroughputScenario.check(backend, senders: 1, sent: 10, loop: loop) }
        loop.send(1)
        await loop.waitUntilIdle()
        try ThroughputScenario.check(backend, senders: 1, sent: 10, loop: loop)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func pingPongRejectsAMissingCycle(backend: Backend) async throws {
        let loop = Systems.pingPong(backend, cycles: 5)
        loop.send(.start)
        await loop.waitUntilIdle()
        #expect(throws: ScenarioFailure.self) {
            try PingPongScenario.check(backend, cycles: 6, state: loop.state, statistics: loop.statistics)
        }
        try PingPongScenario.check(backend, cycles: 5, state: loop.state, statistics: loop.statistics)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func fanoutRejectsAnEffectThatShouldNotHaveStarted(backend: Backend) async throws {
        let quiet = Systems.fanout(backend, feedbacks: 3)
        let noisy = Loop(
            initial: 0, reduce: Systems.add,
            feedbacks: [.skippingRepeated({ $0 }) { _ in .none }, .custom { _, event in event == nil ? .send(0) : .none }],
            backend: backend)
        for loop in [quiet, noisy] {
            loop.send(1)
            await loop.waitUntilIdle()
        }
        func check(_ loop: Loop<Int, Int>) throws {
            try RunCheck(
                run: "fanout", expectedState: 1, finalState: loop.state, statistics: loop.statistics, expectedStarted: 0
            ).validate()
        }
        try check(quiet)
        #expect(throws: ScenarioFailure.self) { try check(noisy) }
        await quiet.stop()
        await noisy.stop()
    }

    @Test(arguments: Backend.allCases)
    func cancellationRejectsALeakedEffectAndMiscountedCancellations(backend: Backend) async throws {
        let census = EffectCensus()
        let loop = Systems.churn(backend, census: census)
        for _ in 0..<3 { loop.send(.next) }
        _ = try await loop.sendAndWait(.sync)
        await loop.stop()
        let good = RunCheck(
            run: "churn", expectedState: 3, finalState: loop.state.generation, statistics: loop.statistics,
            expectedStarted: 4, expectedCancelled: 4, census: census.counts)
        try good.validate()
        var leaked = good
        leaked.census = EffectCensus.Counts(started: 4, cancelled: 3)
        #expect(leaked.leaked == 1)
        #expect(throws: ScenarioFailure.self) { try leaked.validate() }
        var miscounted = good
        miscounted.statistics.effectsCancelled -= 1
        #expect(throws: ScenarioFailure.self) { try miscounted.validate() }
        var stillRunning = good
        stillRunning.expectedRunning = 1
        #expect(throws: ScenarioFailure.self) { try stillRunning.validate() }
    }

    @Test(arguments: Backend.allCases)
    func loopsRejectALoopThatIsNotIdle(backend: Backend) async throws {
        let loop = Systems.idleCounter(backend)
        await loop.waitUntilIdle()
        func check() throws {
            try RunCheck(
                run: "loops", expectedState: 0, finalState: loop.state, expectedReduced: 0, statistics: loop.statistics
            ).validate()
        }
        try check()
        loop.send(1)
        await loop.waitUntilIdle()
        #expect(throws: ScenarioFailure.self) { try check() }
        await loop.stop()
    }

    @Test func latencyRejectsEventsObservedOutOfOrderAndAcceptsInOrder() async throws {
        let inOrder = OpenLoopRecorder(expected: 3, interval: 0, lead: 0)
        for index in 0..<3 { inOrder.receive(index) }
        try await inOrder.waitForAll(seconds: 10, "in order")
        #expect(inOrder.histogram.count == 3)

        let reordered = OpenLoopRecorder(expected: 3, interval: 0, lead: 0)
        for index in [0, 2, 1] { reordered.receive(index) }
        await #expect(throws: ScenarioFailure.self) { try await reordered.waitForAll(seconds: 10, "reordered") }
    }

    @Test func aDroppedEventFailsTheCheck() {
        var statistics = LoopStatistics()
        statistics.eventsReduced = 4
        statistics.eventsDroppedOverCapacity = 1
        #expect(throws: ScenarioFailure.self) {
            try RunCheck(run: "drop", expectedState: 4, finalState: 4, statistics: statistics).validate()
        }
    }
}
