import FeedbackLoop
import FeedbackLoopTracing
import InMemoryTracing
import Testing
import Tracing

/// Rules: a loop with ``LoopTracing`` makes a `reduce` span per event, a child of the context the
/// event was sent in, and an `effect` span per effect, a child of the `reduce` span of the step
/// that started it, ending with its outcome; the effect's body runs in its span's context. On
/// every backend, and nothing is left open once `stop()` returns.
@Suite("Spans for reduced events and effects")
struct LoopTracingTests {
    /// Two requests interleave on one loop, their effects running side by side: each effect span
    /// is a child of its own request's `reduce` span, the back end's call inside it a child of the
    /// effect span, and the effect's event reduced in a span under the effect's.
    @Test(arguments: Backend.allCases)
    func eachEffectIsAChildOfItsOwnRequest(backend: Backend) async throws {
        let tracer = InMemoryTracer()
        let warehouse = Warehouse(tracer: tracer)
        let loop = Orders.loop(backend, tracer: tracer, warehouse: warehouse)
        let requestA = tracer.startSpan("request a")
        let requestB = tracer.startSpan("request b")
        ServiceContext.$current.withValue(requestA.context) { loop.send(.place("a")) }
        ServiceContext.$current.withValue(requestB.context) { loop.send(.place("b")) }
        try await warehouse.waitUntilStarted(["a", "b"])
        warehouse.letThrough("b")
        warehouse.letThrough("a")
        try await withDeadline("both orders placed") { await loop.waitUntilIdle() }
        requestA.end()
        requestB.end()
        await loop.stop()

        let spans = tracer.finishedSpans
        for (order, request) in [("a", requestA), ("b", requestB)] {
            let requestSpan = try #require(spans.first { $0.spanID == request.spanID })
            let reduce = try spans.child(of: requestSpan, named: "reduce")
            #expect(reduce.string("feedback_loop.event") == "place")
            #expect(reduce.string("feedback_loop.label") == "orders")
            let effect = try spans.child(of: reduce, named: "effect")
            #expect(effect.string("feedback_loop.feedback") == "reserve")
            #expect(effect.string("feedback_loop.effect.outcome") == "finished")
            let call = try spans.child(of: effect, named: "warehouse.reserve")
            #expect(call.string("order") == order)
            let placed = try spans.child(of: effect, named: "reduce")
            #expect(placed.string("feedback_loop.event") == "placed")
        }
    }

    @Test(arguments: Backend.allCases)
    func aCancelledEffectsSpanSaysSo(backend: Backend) async throws {
        let tracer = InMemoryTracer()
        let warehouse = Warehouse(tracer: tracer)
        let loop = Orders.loop(backend, tracer: tracer, warehouse: warehouse)
        let request = tracer.startSpan("request")
        ServiceContext.$current.withValue(request.context) { loop.send(.place("a")) }
        try await warehouse.waitUntilStarted(["a"])
        ServiceContext.$current.withValue(request.context) { loop.send(.withdraw("a")) }
        try await withDeadline("the effect cancelled") { await loop.waitUntilIdle() }
        await loop.stop()
        request.end()

        let spans = tracer.finishedSpans
        let requestSpan = try #require(spans.first { $0.spanID == request.spanID })
        let reduces = spans.children(of: requestSpan).named("reduce")
        #expect(reduces.compactMap { $0.string("feedback_loop.event") }.sorted() == ["place", "withdraw"])
        let place = try #require(reduces.first { $0.string("feedback_loop.event") == "place" })
        let effect = try spans.child(of: place, named: "effect")
        #expect(effect.string("feedback_loop.effect.outcome") == "cancelled")
        #expect(effect.errors.isEmpty)
        #expect(effect.status?.code != .error)
    }

    @Test(arguments: Backend.allCases)
    func aFailedEffectsSpanRecordsTheError(backend: Backend) async throws {
        let tracer = InMemoryTracer()
        let warehouse = Warehouse(tracer: tracer)
        let loop = Orders.loop(backend, tracer: tracer, warehouse: warehouse)
        let request = tracer.startSpan("request")
        ServiceContext.$current.withValue(request.context) { loop.send(.place("a")) }
        try await warehouse.waitUntilStarted(["a"])
        warehouse.refuse("a")
        try await withDeadline("the effect failed") { await loop.waitUntilIdle() }
        await loop.stop()
        request.end()

        let spans = tracer.finishedSpans
        let requestSpan = try #require(spans.first { $0.spanID == request.spanID })
        let effect = try spans.child(of: try spans.child(of: requestSpan, named: "reduce"), named: "effect")
        #expect(effect.string("feedback_loop.effect.outcome") == "failed")
        #expect(effect.status?.code == .error)
        #expect(effect.errors.map { $0.error as? Warehouse.Refused } == [Warehouse.Refused(order: "a")])
    }

    /// A dropped event gets a `reduce` span that says why, in the trace of whoever sent it: the
    /// request, for an event sent after stop; the effect, for an event sent by an effect the loop
    /// had cancelled.
    @Test(arguments: Backend.allCases)
    func aDroppedEventsSpanSaysWhy(backend: Backend) async throws {
        let tracer = InMemoryTracer()
        let sinks = Lock<[Sink<Orders.Event>]>([])
        let loop = Loop(
            initial: Orders.State(),
            reduce: Orders.reduce,
            feedbacks: [
                .requests({ $0.placing }) { _ in
                    .callback { sink in
                        sinks.withLock { $0.append(sink) }
                        return Cancellation {}
                    }
                }
            ],
            backend: backend,
            configuration: LoopConfiguration(label: "orders", instruments: [LoopTracing(tracer: tracer)]))
        let request = tracer.startSpan("request")
        ServiceContext.$current.withValue(request.context) { loop.send(.place("a")) }
        try await withDeadline("the callback effect started") {
            while sinks.withLock({ $0.isEmpty }) { await Task.yield() }
        }
        ServiceContext.$current.withValue(request.context) { loop.send(.withdraw("a")) }
        try await withDeadline("the effect cancelled") { await loop.waitUntilIdle() }
        // From a task that runs for no request: the event carries its effect's context.
        let sink = try #require(sinks.withLock { $0.first })
        await Task.detached { sink(.placed("a")) }.value
        try await withDeadline("the late event dropped") {
            while loop.statistics.eventsDroppedFromCancelledEffects == 0 { await Task.yield() }
        }
        await loop.stop()
        ServiceContext.$current.withValue(request.context) { loop.send(.place("b")) }
        request.end()

        let spans = tracer.finishedSpans
        let requestSpan = try #require(spans.first { $0.spanID == request.spanID })
        let place = try #require(
            spans.children(of: requestSpan).named("reduce").first { $0.string("feedback_loop.event") == "place" && $0.string("feedback_loop.dropped") == nil })
        let effect = try spans.child(of: place, named: "effect")
        let fromCancelled = try spans.child(of: effect, named: "reduce")
        #expect(fromCancelled.string("feedback_loop.event") == "placed")
        #expect(fromCancelled.string("feedback_loop.dropped") == "fromCancelledEffect")
        let afterStop = spans.children(of: requestSpan).filter { $0.string("feedback_loop.dropped") != nil }
        #expect(afterStop.map { $0.string("feedback_loop.dropped") } == ["afterStop"])
        #expect(afterStop.map { $0.string("feedback_loop.event") } == ["place"])
    }

    /// Effects still running when the loop stops — a `.run` effect waiting on its back end and a
    /// `.callback` effect that never finishes — end their spans as cancelled before `stop()`
    /// returns.
    @Test(arguments: Backend.allCases)
    func noSpanIsLeftOpenAfterStop(backend: Backend) async throws {
        let tracer = InMemoryTracer()
        let warehouse = Warehouse(tracer: tracer)
        let loop = Loop(
            initial: Orders.State(),
            reduce: Orders.reduce,
            feedbacks: [
                .requests({ $0.placing }) { id in .run { _ in try await warehouse.reserve(id) } },
                .requests({ $0.placing }) { _ in .callback { _ in Cancellation {} } },
            ],
            backend: backend,
            configuration: LoopConfiguration(label: "orders", instruments: [LoopTracing(tracer: tracer)]))
        loop.send(.place("a"))
        loop.send(.place("b"))
        try await warehouse.waitUntilStarted(["a", "b"])
        await loop.stop()

        #expect(tracer.activeSpans.map(\.operationName) == [])
        let effects = tracer.finishedSpans.named("effect")
        #expect(effects.count == 4)
        #expect(effects.allSatisfy { $0.string("feedback_loop.effect.outcome") == "cancelled" })
    }

    /// A loop made without ``LoopTracing`` makes no span, even with a tracer at hand.
    @Test(arguments: Backend.allCases)
    func aLoopWithoutTheInstrumentMakesNoSpan(backend: Backend) async throws {
        let tracer = InMemoryTracer()
        let warehouse = Warehouse(tracer: tracer)
        let loop = Loop(
            initial: Orders.State(),
            reduce: Orders.reduce,
            feedbacks: [.requests({ $0.placing }) { id in .run { _ in try await warehouse.reserve(id) } }],
            backend: backend,
            configuration: LoopConfiguration(serviceContext: .enabled))
        let request = tracer.startSpan("request")
        ServiceContext.$current.withValue(request.context) { loop.send(.place("a")) }
        try await warehouse.waitUntilStarted(["a"])
        warehouse.letThrough("a")
        try await withDeadline("the order placed") { await loop.waitUntilIdle() }
        await loop.stop()
        request.end()
        // The back end's call is still the request's child: the loop propagates, without spans.
        let spans = tracer.finishedSpans
        #expect(spans.map(\.operationName).sorted() == ["request", "warehouse.reserve"])
        #expect(spans.named("warehouse.reserve").first?.parentSpanID == request.spanID)
    }
}
