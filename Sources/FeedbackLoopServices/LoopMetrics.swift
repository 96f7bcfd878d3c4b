#if Services
import FeedbackLoop
import Metrics
import Synchronization

/// swift-metrics for one kind of `Loop`: events reduced and dropped, effects started, finished,
/// cancelled, failed and in flight, and — when you ask for it — how long the reducer takes.
///
/// Create one per kind of loop (its metric objects are made once, here), hand its
/// ``instrumentation(state:event:)`` to the loop, and optionally wrap the reducer with
/// ``timing(_:sampleEvery:)``:
///
/// ```swift
/// let metrics = LoopMetrics(label: "pharmacies", dimensions: [("service", "shop")])
/// let loop = Loop(
///     initial: Pharmacies.State(),
///     reduce: metrics.timing(Pharmacies.reduce),
///     feedbacks: Pharmacies.feedbacks(service: service),
///     instrumentation: metrics.instrumentation()
/// )
/// ```
///
/// Several loops may share one `LoopMetrics` (one loop per session, say): their figures add up,
/// and `<label>_effects_in_flight` is then the total across them.
///
/// ## Metrics
/// Every metric carries the `dimensions` given at creation.
///
/// | label | kind | meaning |
/// |---|---|---|
/// | `<label>_events_reduced_total` | counter | events the reducer ran on |
/// | `<label>_events_dropped_total` | counter, dimension `reason` | events not reduced: a `DropReason` raw value (`afterStop`, `overCapacity`, `fromCancelledEffect`, `discardedAtStop`, `cancelledWhileWaiting`), or `refusedDuringShutdown` for events a ``LoopService`` refused |
/// | `<label>_events_orphaned_total` | counter | child features' events that reached no child, the child being gone (`LoopStatistics.eventsOrphaned`) |
/// | `<label>_effects_started_total` | counter | effects started (every kind but `.none`) |
/// | `<label>_effects_finished_total` | counter | effects that completed by themselves |
/// | `<label>_effects_cancelled_total` | counter | effects the loop cancelled |
/// | `<label>_effects_failed_total` | counter | `.run` effects that threw while running |
/// | `<label>_effects_in_flight` | meter | effects started and not yet finished, cancelled or failed |
/// | `<label>_reduce_duration` | timer | time spent in the reducer, only with ``timing(_:sampleEvery:)`` |
///
/// ## Cost
/// Each reduced event costs one counter increment; each effect three (start, end, in flight up
/// and down). The reducer is timed only when you wrap it with ``timing(_:sampleEvery:)`` — two
/// clock reads and one timer record per measured event — and `sampleEvery` lets you measure one
/// event in `n`.
public final class LoopMetrics: Sendable {
    /// The prefix of every metric's label.
    public let label: String

    let eventsReduced: Counter
    let eventsDropped: [DropReason: Counter]
    let eventsRefused: Counter
    let eventsOrphaned: Counter
    let effectsStarted: Counter
    let effectsFinished: Counter
    let effectsCancelled: Counter
    let effectsFailed: Counter
    let effectsInFlight: Meter
    let reduceDuration: Metrics.Timer

    /// The `reason` dimension of events a ``LoopService`` refused during shutdown.
    public static let refusedDuringShutdownReason = "refusedDuringShutdown"

    /// Creates the metric objects.
    ///
    /// - Parameters:
    ///   - label: The prefix of every metric's label; see the table in ``LoopMetrics``.
    ///   - dimensions: Dimensions added to every metric, such as `[("loop", "pharmacies")]`.
    ///   - factory: The metrics backend; by default the one bootstrapped in `MetricsSystem`.
    ///     Pass one explicitly to keep tests independent of the global bootstrap.
    public init(
        label: String = "feedback_loop",
        dimensions: [(String, String)] = [],
        factory: any MetricsFactory = MetricsSystem.factory
    ) {
        self.label = label
        func counter(_ name: String, _ extra: [(String, String)] = []) -> Counter {
            Counter(label: "\(label)_\(name)", dimensions: dimensions + extra, factory: factory)
        }
        self.eventsReduced = counter("events_reduced_total")
        var dropped: [DropReason: Counter] = [:]
        for reason in DropReason.allCases {
            dropped[reason] = counter("events_dropped_total", [("reason", reason.rawValue)])
        }
        self.eventsDropped = dropped
        self.eventsRefused = counter("events_dropped_total", [("reason", Self.refusedDuringShutdownReason)])
        self.eventsOrphaned = counter("events_orphaned_total")
        self.effectsStarted = counter("effects_started_total")
        self.effectsFinished = counter("effects_finished_total")
        self.effectsCancelled = counter("effects_cancelled_total")
        self.effectsFailed = counter("effects_failed_total")
        self.effectsInFlight = Meter(label: "\(label)_effects_in_flight", dimensions: dimensions, factory: factory)
        self.reduceDuration = Metrics.Timer(label: "\(label)_reduce_duration", dimensions: dimensions, factory: factory)
    }

    /// Hooks that feed these metrics; pass them as the loop's `instrumentation` (or combine them
    /// with others with `LoopInstrumentation.combining(_:)`).
    ///
    /// The hooks only increment counters: they run on the loop's drain thread or an effect's task
    /// and never block.
    public func instrumentation<State: Sendable, Event: Sendable>(
        state: State.Type = State.self,
        event: Event.Type = Event.self
    ) -> LoopInstrumentation<State, Event> {
        LoopInstrumentation(
            onTransition: { [eventsReduced] _, _, _ in
                eventsReduced.increment()
            },
            onEffect: { [self] lifecycle in
                switch lifecycle.kind {
                case .started:
                    effectsStarted.increment()
                    effectsInFlight.increment()
                case .finished:
                    effectsFinished.increment()
                    effectsInFlight.decrement()
                case .cancelled:
                    effectsCancelled.increment()
                    effectsInFlight.decrement()
                case .failed:
                    effectsFailed.increment()
                    effectsInFlight.decrement()
                }
            },
            onDrop: { [eventsDropped] _, reason in
                eventsDropped[reason]?.increment()
            },
            onOrphan: { [eventsOrphaned] _ in
                eventsOrphaned.increment()
            })
    }

    /// Wraps `reduce` so that it records its duration in `<label>_reduce_duration`.
    ///
    /// Leave the reducer unwrapped to pay nothing for timing. With `sampleEvery: n` only one event
    /// in `n` is timed (the first, then every `n`-th), which keeps the clock reads off most
    /// events of a busy loop; values below 1 count as 1.
    ///
    /// ```swift
    /// let loop = Loop(initial: 0, reduce: metrics.timing({ $0 += $1 }, sampleEvery: 16))
    /// ```
    public func timing<State, Event>(
        _ reduce: @escaping @Sendable (inout State, Event) -> Void,
        sampleEvery: Int = 1
    ) -> @Sendable (inout State, Event) -> Void {
        let timer = reduceDuration
        if sampleEvery <= 1 {
            return { state, event in
                let start = ContinuousClock.now
                reduce(&state, event)
                timer.record(duration: ContinuousClock.now - start)
            }
        }
        let sampler = Sampler(every: sampleEvery)
        return { state, event in
            guard sampler.next() else {
                reduce(&state, event)
                return
            }
            let start = ContinuousClock.now
            reduce(&state, event)
            timer.record(duration: ContinuousClock.now - start)
        }
    }

    /// Counts events and says which to measure. The loop never runs its reducer concurrently,
    /// but successive calls may come from different threads, hence the atomic.
    private final class Sampler: Sendable {
        private let count = Atomic<Int>(0)
        private let every: Int

        init(every: Int) { self.every = every }

        func next() -> Bool {
            count.wrappingAdd(1, ordering: .relaxed).oldValue % every == 0
        }
    }

    /// Counts one event a ``LoopService`` refused because its shutdown had begun.
    func recordRefused() {
        eventsRefused.increment()
    }
}

extension LoopInstrumentation {
    /// Instrumentation that feeds a new ``LoopMetrics`` with these label and dimensions.
    ///
    /// A shortcut for `LoopMetrics(label:dimensions:factory:).instrumentation()`; keep a
    /// ``LoopMetrics`` yourself to also time the reducer or share the metrics among loops.
    ///
    /// ```swift
    /// let loop = Loop(initial: 0, reduce: { $0 += $1 }, instrumentation: .metrics(label: "counter"))
    /// ```
    public static func metrics(
        label: String = "feedback_loop",
        dimensions: [(String, String)] = [],
        factory: any MetricsFactory = MetricsSystem.factory
    ) -> LoopInstrumentation {
        LoopMetrics(label: label, dimensions: dimensions, factory: factory).instrumentation()
    }
}

/// A `LoopMetrics` in `LoopConfiguration.instruments` instruments every loop made with that
/// configuration, and a ``LoopService`` running such a loop counts its refused events there too.
extension LoopMetrics: LoopInstrument {}
#endif
