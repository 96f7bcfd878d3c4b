#if Services
import FeedbackLoop

/// What a ``LoopService`` hands to its `onShutdown` callback once its loop has stopped: the final
/// state, the loop's counters, the events the service refused, and how the shutdown went.
public struct LoopShutdownReport<State: Sendable>: Sendable {
    /// How the service's loop came to stop.
    public struct Ending: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// Graceful shutdown: every accepted event was reduced and every effect ended by itself
        /// within the grace period. Nothing was cancelled by the shutdown.
        public static var drained: Ending { Ending("drained") }
        /// Graceful shutdown: the grace period ran out; the effects still running then were
        /// cancelled (see ``LoopShutdownReport/statistics``).
        public static var gracePeriodExpired: Ending { Ending("gracePeriodExpired") }
        /// The task running the service was cancelled (for example by a `ServiceGroup` whose
        /// graceful shutdown took too long): the loop stopped at once, without a grace period.
        public static var cancelled: Ending { Ending("cancelled") }
        /// The loop stopped by other means (someone called `Loop.stop()`) while the service was
        /// running.
        public static var loopStopped: Ending { Ending("loopStopped") }

        public var description: String { name }
    }

    /// The loop's state after it stopped.
    public var finalState: State
    /// The loop's counters after it stopped.
    public var statistics: LoopStatistics
    /// Events that ``LoopService/send(_:)`` and ``LoopService/sendAndWait(_:)`` refused because
    /// shutdown had begun. They never reached the loop, so ``statistics`` does not count them.
    public var eventsRefused: Int
    /// How the loop came to stop.
    public var ending: Ending

    /// A report with these values; ``LoopService`` makes them, tests of `onShutdown` callbacks
    /// may too.
    public init(finalState: State, statistics: LoopStatistics, eventsRefused: Int, ending: Ending) {
        self.finalState = finalState
        self.statistics = statistics
        self.eventsRefused = eventsRefused
        self.ending = ending
    }
}
#endif
