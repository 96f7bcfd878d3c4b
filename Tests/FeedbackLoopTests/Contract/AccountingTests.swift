@testable import FeedbackLoop
import Testing

/// Rule 8, on every path: nothing the loop refuses or drops goes uncounted — every event is
/// reduced or counted in exactly one drop counter, and reported to `onDrop`.
@Suite("8. Every refused or dropped event is counted")
struct AccountingTests {
    @Test(arguments: Backend.allCases)
    func aSendAndWaitRefusedAfterStopIsCountedAndReported(backend: Backend) async throws {
        let drops = Locked<[DropReason]>([])
        let loop = Loop(
            initial: Counter.State(), reduce: Counter.reduce, backend: backend,
            instrumentation: LoopInstrumentation(onDrop: { _, reason in drops.append(reason) }))
        await loop.stop()
        await #expect(throws: LoopError.stopped) { try await loop.sendAndWait(.increment) }
        #expect(loop.statistics.eventsDroppedAfterStop == 1)
        #expect(drops.current == [.afterStop])
    }

    /// A `.send(a, b, c)` effect that starts as stop begins: all three are refused, counted and
    /// reported, not only the first. (The stop begins from inside the feedback, through the
    /// engine, to place it exactly; a `stop()` from another task hit the same window at random.
    /// The test's own `stop()` waits for that: on `actor` and `stream` the flag is reduced on
    /// another thread, and a `stop()` that came first would discard it unreduced.)
    @Test(arguments: Backend.allCases)
    func everyEventOfASendEffectStartedAsStopBeginsIsCounted(backend: Backend) async throws {
        let drops = Locked<[Counter.Event]>([])
        let box = Locked<Loop<Counter.State, Counter.Event>?>(nil)
        let stopBegun = Gate()
        let loop = Loop(
            initial: Counter.State(),
            reduce: Counter.reduce,
            feedbacks: [
                .custom { _, event in
                    guard event == .setFlag(true) else { return .none }
                    box.current?.engine.beginStop()
                    stopBegun.open()
                    return .send(.record(1), .record(2), .record(3))
                },
            ],
            backend: backend,
            instrumentation: LoopInstrumentation(onDrop: { event, reason in
                if reason == .afterStop { drops.append(event) }
            }))
        box.withLock { $0 = loop }
        loop.send(.setFlag(true))
        try await withDeadline("the feedback to begin the stop") { await stopBegun.wait() }
        try await withDeadline("stop") { await loop.stop() }
        box.withLock { $0 = nil }
        #expect(drops.current == [.record(1), .record(2), .record(3)])
        let statistics = loop.statistics
        #expect(statistics.eventsDroppedAfterStop == 3)
        #expect(statistics.eventsReduced == 1)
        #expect(loop.state.history.isEmpty)
    }

    @Test(arguments: Backend.allCases)
    func eventsSentThroughASinkAfterItsEffectEndedAreDroppedAndCounted(backend: Backend) async throws {
        let escaped = Locked<Sink<Counter.Event>?>(nil)
        let drops = Locked<[DropReason]>([])
        let loop = Loop(
            initial: Counter.State(query: 1),
            reduce: Counter.reduce,
            feedbacks: [
                .skippingRepeated({ $0.query }) { _ in
                    .run { send in escaped.withLock { $0 = send } }  // returns: the effect has ended
                },
            ],
            backend: backend,
            instrumentation: LoopInstrumentation(onDrop: { _, reason in drops.append(reason) }))
        try await withDeadline("the effect to end") { await loop.waitUntilIdle() }
        escaped.current?.send(.increment)
        escaped.current?.send(.increment)
        await loop.waitUntilIdle()
        #expect(loop.state.count == 0, "a sink that outlived its effect changed the state")
        #expect(loop.statistics.eventsDroppedFromCancelledEffects == 2)
        #expect(drops.current == [.fromCancelledEffect, .fromCancelledEffect])
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func eventsSentAfterACallbackEffectFinishedAreDroppedAndCounted(backend: Backend) async throws {
        let loop = Loop(
            initial: Counter.State(query: 1),
            reduce: Counter.reduce,
            feedbacks: [
                .skippingRepeated({ $0.query }) { _ in
                    .callback { sink in
                        sink.send(.increment)  // before finishing: reduced
                        sink.finish()
                        sink.send(.increment)  // after: dropped
                        return .none
                    }
                },
            ],
            backend: backend)
        await loop.waitUntilIdle()
        #expect(loop.state.count == 1)
        let statistics = loop.statistics
        #expect(statistics.eventsDroppedFromCancelledEffects == 1)
        #expect(statistics.effectsFinished == 1)
        #expect(statistics.effectsRunning == 0)
        await loop.stop()
    }
}
