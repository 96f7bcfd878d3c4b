import FeedbackLoop
import FeedbackLoopServices
import MetricsTestKit
import Testing

@Suite(.timeLimit(.minutes(5)))
struct LoopMetricsTests {
    static let dimensions = [("suite", "metrics")]

    @Test("counts reduced and dropped events and each effect's life", arguments: Backend.allCases)
    func countsEventsAndEffects(backend: Backend) async throws {
        let testMetrics = TestMetrics()
        let metrics = LoopMetrics(label: "jobs", dimensions: Self.dimensions, factory: testMetrics)
        let probe = Jobs.Probe()
        let effects = EffectLog()
        let loop = Loop(
            initial: Jobs.State(),
            reduce: metrics.timing(Jobs.reduce),
            feedbacks: probe.feedbacks,
            backend: backend,
            configuration: LoopConfiguration(label: "jobs", onEffectError: { _ in }),
            instrumentation: .combining([metrics.instrumentation(), effects.instrumentation()]))

        try await loop.sendAndWait(.add(1))
        try await loop.sendAndWait(.add(2))
        loop.send(.startQuick)
        await probe.quickStarted.wait()
        probe.releaseQuick.open()
        loop.send(.startFailing)
        loop.send(.startStuck)
        await probe.stuckStarted.wait()
        #expect(try testMetrics.expectMeter("jobs_effects_in_flight", Self.dimensions).lastValue ?? 0 >= 1)
        loop.send(.stopStuck)
        await loop.waitUntilIdle()
        await loop.stop()
        await effects.waitUntilEnded(count: 3)
        loop.send(.add(5))

        // add, add, startQuick, quickDone, startFailing, startStuck, stopStuck
        #expect(try counter("jobs_events_reduced_total", in: testMetrics) == 7)
        #expect(try counter("jobs_effects_started_total", in: testMetrics) == 3)
        #expect(try counter("jobs_effects_finished_total", in: testMetrics) == 1)
        #expect(try counter("jobs_effects_failed_total", in: testMetrics) == 1)
        #expect(try counter("jobs_effects_cancelled_total", in: testMetrics) == 1)
        #expect(try testMetrics.expectMeter("jobs_effects_in_flight", Self.dimensions).lastValue == 0)
        #expect(try dropped(.afterStop, in: testMetrics) == 1)
        #expect(try dropped(.overCapacity, in: testMetrics) == 0)
        #expect(try dropped(.fromCancelledEffect, in: testMetrics) == 0)
        #expect(try dropped(.discardedAtStop, in: testMetrics) == 0)
        #expect(try testMetrics.expectTimer("jobs_reduce_duration", Self.dimensions).values.count == 7)
    }

    @Test("an effect's events after its cancellation count as dropped", arguments: Backend.allCases)
    func dropsFromCancelledEffects(backend: Backend) async throws {
        let testMetrics = TestMetrics()
        let metrics = LoopMetrics(label: "late", dimensions: Self.dimensions, factory: testMetrics)
        let sink = Delivery<Sink<Int>>()
        let effects = EffectLog()
        let loop = Loop<Int, Int>(
            initial: 0,
            reduce: { $0 += $1 },
            feedbacks: [
                .whenBecomesTrue({ $0 == 0 }) { _ in
                    .callback { send in
                        sink.deliver(send)
                        return Cancellation {}
                    }
                }
            ],
            backend: backend,
            instrumentation: .combining([metrics.instrumentation(), effects.instrumentation()]))

        try await loop.sendAndWait(1)  // the predicate turns false: the callback effect is cancelled
        let send = try #require(sink.values.only)
        send(10)
        await loop.waitUntilIdle()
        await effects.waitUntilEnded(count: 1)

        #expect(loop.state == 1)
        #expect(try dropped(.fromCancelledEffect, in: testMetrics, label: "late") == 1)
        #expect(try counter("late_effects_cancelled_total", in: testMetrics) == 1)
        #expect(try testMetrics.expectMeter("late_effects_in_flight", Self.dimensions).lastValue == 0)
        await loop.stop()
    }

    @Test("times one reduce in n when sampling", arguments: Backend.allCases)
    func sampledTiming(backend: Backend) async throws {
        let testMetrics = TestMetrics()
        let metrics = LoopMetrics(label: "sampled", factory: testMetrics)
        let loop = Loop<Int, Int>(
            initial: 0, reduce: metrics.timing({ $0 += $1 }, sampleEvery: 3), backend: backend,
            instrumentation: metrics.instrumentation())
        for n in 1...7 { loop.send(n) }
        await loop.waitUntilIdle()

        #expect(loop.state == 28)
        // Events 1, 4 and 7 are timed.
        #expect(try testMetrics.expectTimer("sampled_reduce_duration").values.count == 3)
        #expect(try testMetrics.expectCounter("sampled_events_reduced_total").totalValue == 7)
        await loop.stop()
    }

    @Test("the instrumentation shortcut feeds the same metrics", arguments: Backend.allCases)
    func shortcut(backend: Backend) async throws {
        let testMetrics = TestMetrics()
        let loop = Loop<Int, Int>(
            initial: 0, reduce: { $0 += $1 }, backend: backend,
            instrumentation: .metrics(label: "counter", dimensions: [("loop", "a")], factory: testMetrics))
        for n in 1...4 { loop.send(n) }
        await loop.waitUntilIdle()

        #expect(try testMetrics.expectCounter("counter_events_reduced_total", [("loop", "a")]).totalValue == 4)
        #expect(testMetrics.timers(label: "counter_reduce_duration").allSatisfy { $0.values.isEmpty })
        await loop.stop()
    }

    /// A parent holding an optional child counter, whose events can outlive it.
    enum Holder {
        struct State: Sendable, Equatable { var child: Int? = 0 }
        enum Event: Sendable { case child(Int), removeChild }

        static let child = ChildScope(
            state: StatePath(\State.child),
            event: EventPath<Event, Int>(embed: Event.child, extract: { if case .child(let n) = $0 { n } else { nil } }))

        static func reduce(_ state: inout State, _ event: Event) {
            child.reduce(&state, event) { $0 += $1 }
            if case .removeChild = event { state.child = nil }
        }
    }

    @Test("counts child events that reach no child, as LoopStatistics.eventsOrphaned does", arguments: Backend.allCases)
    func countsOrphanedEvents(backend: Backend) async throws {
        let testMetrics = TestMetrics()
        let metrics = LoopMetrics(label: "holder", dimensions: Self.dimensions, factory: testMetrics)
        let loop = Loop(
            initial: Holder.State(),
            reduce: Holder.reduce,
            feedbacks: [Holder.child.feedback([Feedback<Int, Int>]())],
            backend: backend,
            configuration: LoopConfiguration(logger: .quiet),
            instrumentation: metrics.instrumentation())

        try await loop.sendAndWait(.child(1))
        try await loop.sendAndWait(.removeChild)
        try await loop.sendAndWait(.child(2))
        try await loop.sendAndWait(.child(3))

        #expect(loop.statistics.eventsOrphaned == 2)
        #expect(try counter("holder_events_orphaned_total", in: testMetrics) == 2)
        #expect(try counter("holder_events_reduced_total", in: testMetrics) == 4, "an orphan's parent event is reduced")
        await loop.stop()
    }

    private func counter(_ label: String, in metrics: TestMetrics) throws -> Int64 {
        try metrics.expectCounter(label, Self.dimensions).totalValue
    }

    private func dropped(_ reason: DropReason, in metrics: TestMetrics, label: String = "jobs") throws -> Int64 {
        try metrics.expectCounter("\(label)_events_dropped_total", Self.dimensions + [("reason", reason.rawValue)])
            .totalValue
    }
}
