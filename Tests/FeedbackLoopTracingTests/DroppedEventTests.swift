import FeedbackLoop
import FeedbackLoopTracing
import InMemoryTracing
import Testing
import Tracing

/// Rules: every event a loop with ``LoopTracing`` does not reduce gets a `reduce` span, a child of
/// the context the event was sent in (its request's span, or the span of the effect that sent
/// it), whose `feedback_loop.dropped` names the `DropReason`, for each reason and each place the
/// engine drops an event. On every backend. (``LoopTracingTests/aDroppedEventsSpanSaysWhy(backend:)``
/// covers a `send` after stop and an event sent by an effect already cancelled.)
@Suite("Spans of dropped events")
struct DroppedEventTests {
    /// A `send` that finds the bounded queue full.
    @Test(arguments: Backend.allCases)
    func anEventOverCapacity(backend: Backend) async throws {
        let tracer = InMemoryTracer()
        let loop = Self.loop(backend, tracer: tracer, capacity: .bounded(1))
        let request = tracer.startSpan("request")
        try await withDrainHeld(loop, by: .place("hold"), at: { $0.placing.contains("hold") }) { release in
            ServiceContext.$current.withValue(request.context) {
                loop.send(.place("a"))  // the one place in the queue
                loop.send(.place("b"))  // finds it taken
            }
            #expect(loop.statistics.eventsDroppedOverCapacity == 1)
            release.open()
        }
        try await withDeadline("the queue drained") { await loop.waitUntilIdle() }
        await loop.stop()
        request.end()

        let spans = tracer.finishedSpans
        let requestSpan = try #require(spans.first { $0.spanID == request.spanID })
        #expect(spans.children(of: requestSpan).summaries == ["reduce place", "reduce place dropped: overCapacity"])
        #expect(spans.children(of: requestSpan).allSatisfy { $0.string("feedback_loop.label") == "orders" })
    }

    /// Events still waiting when `stop()` begins: a queued `send`, a queued `sendAndWait`, and a
    /// `sendAndWait` parked for room in the bounded queue. Each span is in its own request's
    /// trace, and each `sendAndWait` caller is told the loop stopped.
    @Test(arguments: Backend.allCases)
    func eventsDiscardedAtStop(backend: Backend) async throws {
        let tracer = InMemoryTracer()
        let loop = Self.loop(backend, tracer: tracer, capacity: .bounded(2))
        let requests = ["a", "b", "c"].map { tracer.startSpan("request \($0)") }
        try await withDrainHeld(loop, by: .place("hold"), at: { $0.placing.contains("hold") }) { release in
            ServiceContext.$current.withValue(requests[0].context) { loop.send(.place("a")) }
            let waitingB = Task { [context = requests[1].context] in
                try await ServiceContext.$current.withValue(context) { try await loop.sendAndWait(.place("b")) }
            }
            try await waitUntil("b to be queued") { loop.waiting.queued == 2 }
            let waitingC = Task { [context = requests[2].context] in
                try await ServiceContext.$current.withValue(context) { try await loop.sendAndWait(.place("c")) }
            }
            try await waitUntil("c to be parked") { loop.waiting.parked == 1 }
            let stopped = Task { await loop.stop() }
            try await waitUntil("stop to begin") { loop.statistics.eventsDiscardedAtStop == 3 }
            release.open()
            try await withDeadline("stop") { await stopped.value }
            await #expect(throws: LoopError.stopped) { try await waitingB.value }
            await #expect(throws: LoopError.stopped) { try await waitingC.value }
        }
        for request in requests { request.end() }

        let spans = tracer.finishedSpans
        for (order, request) in zip(["a", "b", "c"], requests) {
            let requestSpan = try #require(spans.first { $0.spanID == request.spanID })
            #expect(spans.children(of: requestSpan).summaries == ["reduce place dropped: discardedAtStop"], "order \(order)")
        }
    }

    /// A `sendAndWait` after stop, as a `send` after stop: its caller is told, and its span says so.
    @Test(arguments: Backend.allCases)
    func aSendAndWaitAfterStop(backend: Backend) async throws {
        let tracer = InMemoryTracer()
        let loop = Self.loop(backend, tracer: tracer)
        await loop.stop()
        let request = tracer.startSpan("request")
        await #expect(throws: LoopError.stopped) {
            try await ServiceContext.$current.withValue(request.context) { try await loop.sendAndWait(.place("a")) }
        }
        request.end()

        let spans = tracer.finishedSpans
        let requestSpan = try #require(spans.first { $0.spanID == request.spanID })
        #expect(spans.children(of: requestSpan).summaries == ["reduce place dropped: afterStop"])
    }

    /// A `sendAndWait` whose task is cancelled while it waits for room in the bounded queue: its
    /// span, a child of its caller's, says so; the event was never queued, so nothing else of it.
    @Test(arguments: Backend.allCases)
    func aSendAndWaitCancelledWhileWaitingForRoom(backend: Backend) async throws {
        let tracer = InMemoryTracer()
        let loop = Self.loop(backend, tracer: tracer, capacity: .bounded(1))
        let requests = ["a", "b"].map { tracer.startSpan("request \($0)") }
        try await withDrainHeld(loop, by: .place("hold"), at: { $0.placing.contains("hold") }) { release in
            ServiceContext.$current.withValue(requests[0].context) { loop.send(.place("a")) }
            let waitingB = Task { [context = requests[1].context] in
                try await ServiceContext.$current.withValue(context) { try await loop.sendAndWait(.place("b")) }
            }
            try await waitUntil("b to be parked") { loop.waiting.parked == 1 }
            waitingB.cancel()
            await #expect(throws: LoopError.cancelled) { try await waitingB.value }
            release.open()
        }
        try await withDeadline("the queue drained") { await loop.waitUntilIdle() }
        await loop.stop()
        for request in requests { request.end() }

        let spans = tracer.finishedSpans
        let (a, b) = try (#require(spans.first { $0.spanID == requests[0].spanID }), #require(spans.first { $0.spanID == requests[1].spanID }))
        #expect(spans.children(of: a).summaries == ["reduce place"])
        #expect(spans.children(of: b).summaries == ["reduce place dropped: cancelledWhileWaiting"])
        #expect(loop.statistics.eventsCancelledWhileWaiting == 1)
    }

    /// An effect's event that was queued while its effect ran, and reached its turn after the
    /// loop had cancelled the effect: dropped when it would have been reduced, its span a child
    /// of the effect's.
    @Test(arguments: Backend.allCases)
    func anEffectsQueuedEventAfterItsEffectWasCancelled(backend: Backend) async throws {
        let tracer = InMemoryTracer()
        let sinks = Lock<[String: Sink<Orders.Event>]>([:])
        let loop = Self.loop(
            backend, tracer: tracer,
            feedbacks: [
                .requests({ $0.placing }) { id in
                    .callback { sink in
                        sinks.withLock { $0[id] = sink }
                        return Cancellation {}
                    }
                }
            ])
        let request = tracer.startSpan("request")
        ServiceContext.$current.withValue(request.context) { loop.send(.place("a")) }
        try await waitUntil("a's effect to start") { sinks.withLock { $0["a"] != nil } }
        try await withDrainHeld(loop, by: .place("hold"), at: { $0.placing.contains("hold") }) { release in
            // The withdrawal comes first in the queue: by the time `placed` has its turn, the
            // effect that sent it is cancelled.
            ServiceContext.$current.withValue(request.context) { loop.send(.withdraw("a")) }
            let sink = try #require(sinks.withLock { $0["a"] })
            await Task.detached { sink(.placed("a")) }.value
            #expect(loop.statistics.eventsDroppedFromCancelledEffects == 0, "queued while its effect ran")
            release.open()
        }
        // Not `waitUntilIdle()`: the effect of `hold` never ends.
        try await waitUntil("placed to be dropped") { loop.statistics.eventsDroppedFromCancelledEffects == 1 }
        await loop.stop()
        request.end()

        let spans = tracer.finishedSpans
        let requestSpan = try #require(spans.first { $0.spanID == request.spanID })
        let place = try #require(spans.children(of: requestSpan).first { $0.summary == "reduce place" })
        let effect = try spans.child(of: place, named: "effect")
        #expect(effect.string("feedback_loop.effect.outcome") == "cancelled")
        #expect(spans.children(of: effect).summaries == ["reduce placed dropped: fromCancelledEffect"])
    }

    static func loop(
        _ backend: Backend, tracer: InMemoryTracer, capacity: EventCapacity = .unbounded,
        feedbacks: [Feedback<Orders.State, Orders.Event>] = []
    ) -> Loop<Orders.State, Orders.Event> {
        Loop(
            initial: Orders.State(),
            reduce: Orders.reduce,
            feedbacks: feedbacks,
            backend: backend,
            configuration: LoopConfiguration(label: "orders", capacity: capacity, instruments: [LoopTracing(tracer: tracer)]))
    }
}
