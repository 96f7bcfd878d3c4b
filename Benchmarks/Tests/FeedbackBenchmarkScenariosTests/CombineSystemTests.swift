@preconcurrency import OpenCombine
import FeedbackLoop
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

    @Test func theSystemPublishesEachStateWithTheEventThatProducedIt() {
        let input = PassthroughSubject<Int, Never>()
        var seen: [(Int, Int?)] = []
        let subscription = CombineSystem.system(
            initial: 0, reduce: { $0 += $1 }, scheduler: CombineSystem.Trampoline(),
            feedbacks: [.custom { _ in input.eraseToAnyPublisher() }]
        )
        .sink { seen.append($0) }
        input.send(2)
        input.send(3)
        #expect(seen.map(\.0) == [0, 2, 5])
        #expect(seen.map(\.1) == [nil, 2, 3])
        subscription.cancel()
    }

    @Test func theEventsOfACancelledEffectStillQueuedAreDropped() {
        // The effect answers state [0] with 1 and 2 at once, while the queue is draining: both are
        // queued. Reducing 1 changes the query, which cancels the effect; 2 must not be reduced.
        let loop = CombineSystem.Loop<[Int], Int>(
            initial: [], reduce: { $0.append($1) },
            feedbacks: [
                .skippingRepeated({ $0 == [0] ? 0 : nil }) { _ in
                    [1, 2].publisher.append(Empty(completeImmediately: false)).eraseToAnyPublisher()
                }
            ])
        loop.send(0)
        #expect(loop.state == [0, 1])
        loop.stop()
    }

    @Test func lensingStartsAnEffectForEveryStateAndSkippingRepeatedOnlyForANewQuery() {
        let lensed = EffectCensus()
        let skipping = EffectCensus()
        func effect(_ census: EffectCensus) -> AnyPublisher<Int, Never> {
            Deferred { () -> Empty<Int, Never> in
                census.began()
                return Empty(completeImmediately: false)
            }
            .handleEvents(receiveCancel: { census.ended(generation: 0) })
            .eraseToAnyPublisher()
        }
        let loop = CombineSystem.Loop<Int, Int>(
            initial: 0, reduce: { $0 += $1 },
            feedbacks: [.lensing({ _ in true }) { _ in effect(lensed) }, .skippingRepeated({ _ in true }) { _ in effect(skipping) }])
        for _ in 0..<3 { loop.send(1) }
        #expect(lensed.counts == EffectCensus.Counts(started: 4, cancelled: 3))
        #expect(skipping.counts == EffectCensus.Counts(started: 1, cancelled: 0))
        loop.stop()
        #expect(lensed.counts == EffectCensus.Counts(started: 4, cancelled: 4))
        #expect(skipping.counts == EffectCensus.Counts(started: 1, cancelled: 1))
    }

    @Test func requestsRunOneEffectPerRequestAndCancelEachWhenItLeavesTheSet() {
        let log = Lock<[String]>([])
        let loop = CombineSystem.Loop<Set<Int>, Set<Int>>(
            initial: [], reduce: { $0 = $1 },
            feedbacks: [
                .requests({ $0 }) { request in
                    Deferred { () -> Empty<Set<Int>, Never> in
                        log.withLock { $0.append("start \(request)") }
                        return Empty(completeImmediately: false)
                    }
                    .handleEvents(receiveCancel: { log.withLock { $0.append("cancel \(request)") } })
                    .eraseToAnyPublisher()
                }
            ])
        loop.send([1, 2])
        #expect(Set(log.withLock { $0 }) == ["start 1", "start 2"])
        log.withLock { $0 = [] }
        loop.send([2, 3])
        #expect(log.withLock { $0 } == ["cancel 1", "start 3"])
        log.withLock { $0 = [] }
        loop.stop()
        #expect(Set(log.withLock { $0 }) == ["cancel 2", "cancel 3"])
    }
}
