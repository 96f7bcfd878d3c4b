#if Services
import Metrics

/// swift-metrics for one ``LoopRegistry``: how many loops are live, and how many were created,
/// evicted, removed and refused.
///
/// | label | kind | meaning |
/// |---|---|---|
/// | `<label>_loops_live` | meter | loops in the registry, running or ending |
/// | `<label>_loops_created_total` | counter | loops created on first use |
/// | `<label>_loops_evicted_total` | counter | loops drained because they were idle for ``LoopRegistry/Configuration/idleTimeout`` |
/// | `<label>_loops_removed_total` | counter | loops stopped by ``LoopRegistry/remove(_:)`` |
/// | `<label>_loops_refused_total` | counter, dimension `reason` | uses that could not get a loop: `tooManyLoops` or `shuttingDown` (a ``LoopRegistryError/Code``) |
///
/// The loops' own figures (events, effects) come from a ``LoopMetrics`` given to each loop.
public final class LoopRegistryMetrics: Sendable {
    /// The prefix of every metric's label.
    public let label: String

    let live: Meter
    let created: Counter
    let evicted: Counter
    let removed: Counter
    let refusedTooMany: Counter
    let refusedShuttingDown: Counter

    /// Creates the metric objects.
    ///
    /// - Parameters:
    ///   - label: The prefix of every metric's label; see the table in ``LoopRegistryMetrics``.
    ///   - dimensions: Dimensions added to every metric.
    ///   - factory: The metrics backend; by default the one bootstrapped in `MetricsSystem`.
    public init(
        label: String = "loop_registry",
        dimensions: [(String, String)] = [],
        factory: any MetricsFactory = MetricsSystem.factory
    ) {
        self.label = label
        func counter(_ name: String, _ extra: [(String, String)] = []) -> Counter {
            Counter(label: "\(label)_\(name)", dimensions: dimensions + extra, factory: factory)
        }
        self.live = Meter(label: "\(label)_loops_live", dimensions: dimensions, factory: factory)
        self.created = counter("loops_created_total")
        self.evicted = counter("loops_evicted_total")
        self.removed = counter("loops_removed_total")
        self.refusedTooMany = counter("loops_refused_total", [("reason", LoopRegistryError.Code.tooManyLoops.description)])
        self.refusedShuttingDown = counter(
            "loops_refused_total", [("reason", LoopRegistryError.Code.shuttingDown.description)])
    }
}
#endif
