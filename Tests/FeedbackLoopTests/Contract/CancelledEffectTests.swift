import FeedbackLoop
import Testing

/// Rule 5: a cancelled effect can no longer change state; what it sends after its query changed,
/// or after stop, is dropped and counted, never reduced.
@Suite("5. A cancelled effect can no longer change state")
struct CancelledEffectTests {
    /// Keeps the sink of the latest effect so the test can send through it after cancellation.
    final class SinkBox: Sendable {
        let sinks = Locked<[Int: Sink<Counter.Event>]>([:])
        func effect(_ query: Int) -> Effect<Counter.Event> {
            .callback { sink in
                self.sinks.withLock { $0[query] = sink }
                return .none
            }
        }
        subscript(query: Int) -> Sink<Counter.Event>? { sinks.withLock { $0[query] } }
    }

    @Test(arguments: Backend.allCases)
    func eventsSentAfterTheQueryChangedAreDroppedAndCounted(backend: Backend) async throws {
        let box = SinkBox()
        let dropped = Locked<[Counter.Event]>([])
        let loop = Loop(
            initial: Counter.State(query: 1),
            reduce: Counter.reduce,
            feedbacks: [.skippingRepeated({ $0.query }) { box.effect($0) }],
            backend: backend,
            instrumentation: LoopInstrumentation(onDrop: { event, reason in
                if reason == .fromCancelledEffect { dropped.append(event) }
            }))
        await loop.barrier()
        let first = try #require(box[1])
        first(.add(1))
        await loop.barrier()
        #expect(loop.state.count == 1, "a running effect's events count")

        try await loop.sendAndWait(.setQuery(2))
        #expect(first.isCancelled)
        first(.add(100))
        await loop.barrier()

        #expect(loop.state.count == 1)
        #expect(loop.statistics.eventsDroppedFromCancelledEffects == 1)
        #expect(dropped.current == [.add(100)])
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func eventsQueuedBeforeCancellationButNotYetReducedAreDropped(backend: Backend) async throws {
        // The effect sends two events while it starts: the first changes its own query, which
        // cancels it, so the second — still queued — must not be reduced.
        let loop = Loop(
            initial: Counter.State(query: 1),
            reduce: Counter.reduce,
            feedbacks: [
                .skippingRepeated({ $0.query }) { query in
                    query == 1 ? .callback { sink in
                        sink(.setQuery(2))
                        sink(.add(100))
                        return .none
                    } : .none
                },
            ],
            backend: backend)
        await loop.waitUntilIdle()
        #expect(loop.state.query == 2)
        #expect(loop.state.count == 0)
        #expect(loop.statistics.eventsDroppedFromCancelledEffects == 1)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func aRunEffectCancelledMidFlightCannotDeliverItsLateAnswer(backend: Backend) async throws {
        let started = CountdownLatch()
        let release = Gate()
        let loop = Loop(
            initial: Counter.State(query: 1),
            reduce: Counter.reduce,
            feedbacks: [
                .skippingRepeated({ $0.query }) { query in
                    .run { send in
                        started.increment()
                        if query == 1 {
                            await release.wait()  // ignores cancellation, like a slow network call
                            send(.add(1_000))
                        }
                    }
                },
            ],
            backend: backend)
        try await withDeadline("the first effect to start") { await started.wait(for: 1) }
        try await loop.sendAndWait(.setQuery(2))
        release.open()
        try await withDeadline("both effects to end") { await loop.waitUntilIdle() }
        #expect(loop.state.count == 0)
        #expect(loop.statistics.eventsDroppedFromCancelledEffects == 1)
        #expect(loop.statistics.effectsCancelled == 1)
        #expect(loop.statistics.effectsFinished == 1)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func eventsAnEffectSendsAfterStopAreDroppedAndCounted(backend: Backend) async throws {
        let box = SinkBox()
        let loop = Loop(
            initial: Counter.State(query: 1),
            reduce: Counter.reduce,
            feedbacks: [.skippingRepeated({ $0.query }) { box.effect($0) }],
            backend: backend)
        await loop.barrier()
        let sink = try #require(box[1])
        await loop.stop()
        sink(.add(5))
        #expect(sink.isCancelled)
        #expect(loop.state.count == 0)
        #expect(loop.statistics.eventsDroppedFromCancelledEffects + loop.statistics.eventsDroppedAfterStop == 1)
    }
}
