@preconcurrency import OpenCombine
import Testing

@testable import FeedbackBenchmarkScenarios

/// The peer behaves as the `system` operator is published to: states start with the initial one,
/// every event is reduced once and in order, a `skippingRepeated` feedback starts an effect per new
/// query and cancels the previous one, synchronous answers are queued rather than recursed into,
/// and stopping cancels what runs. A peer that broke these would make its column meaningless.
@Suite struct CombineSystemTests {
    @Test func everyEventIsReducedOnceInOrder() {
        let loop = CombineSystem.Loop<[Int], Int>(initial: [], reduce: { $0.append($1) })
        #expect(loop.state == [])
        #expect(loop.reduced == 0)
        for event in 1...5 { loop.send(event) }
        #expect(loop.state == [1, 2, 3, 4, 5])
        #expect(loop.reduced == 5)
        loop.stop()
        loop.send(6)
        #expect(loop.state == [1, 2, 3, 4, 5])
    }

    @Test func aSynchronousAnswerIsQueuedNotRecursedInto() {
        // 100,000 nested sends would overflow the stack if the scheduler recursed.
        let loop = PeerSystems.pingPong(cycles: 100_000)
        loop.send(.start)
        #expect(loop.state.count == 100_000)
        #expect(loop.reduced == 100_001)
        loop.stop()
    }

    @Test func switchLatestStartsOneEffectPerQueryAndCancelsThePrevious() throws {
        let census = EffectCensus()
        let loop = PeerSystems.churn(census: census)
        #expect(census.counts == EffectCensus.Counts(started: 1, cancelled: 0))
        loop.send(.next)
        loop.send(.sync)
        loop.send(.next)
        #expect(census.counts == EffectCensus.Counts(started: 3, cancelled: 2))
        loop.stop()
        #expect(census.counts == EffectCensus.Counts(started: 3, cancelled: 3))
        try PeerCheck(run: "churn", expectedState: 2, finalState: loop.state.generation, reduced: loop.reduced, expectedReduced: 3, census: census.counts, expectedStarted: 3).validate()
    }

    @Test func sendsFromFourThreadsAreSerialised() async throws {
        let loop = PeerSystems.counter()
        await onDedicatedThreads(4) { _ in
            for _ in 0..<5_000 { loop.send(1) }
        }
        #expect(loop.state == 20_000)
        #expect(loop.reduced == 20_000)
        loop.stop()
    }

    @Test func theCheckRejectsALostEventAndALeakedEffect() {
        #expect(throws: ScenarioFailure.self) {
            try PeerCheck(run: "lost", expectedState: 10, finalState: 9, reduced: 9).validate()
        }
        #expect(throws: ScenarioFailure.self) {
            try PeerCheck(run: "unreduced", expectedState: 10, finalState: 10, reduced: 9).validate()
        }
        #expect(throws: ScenarioFailure.self) {
            try PeerCheck(
                run: "leak", expectedState: 1, finalState: 1, reduced: 1, census: EffectCensus.Counts(started: 2, cancelled: 1)
            ).validate()
        }
    }
}
