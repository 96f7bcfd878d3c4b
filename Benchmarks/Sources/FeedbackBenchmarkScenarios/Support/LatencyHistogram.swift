import FeedbackLoop
import Histogram

/// An HDR histogram of nanosecond latencies that any thread may record into.
///
/// Behind the core's `Lock` (a pthread mutex under `-DTSAN`): recorders on several threads contend
/// for it, and ThreadSanitizer reports false races inside a contended `Synchronization.Mutex`.
final class LatencyHistogram: Sendable {
    private let histogram = Lock(Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three))

    func record(_ nanoseconds: UInt64) {
        histogram.withLock { _ = $0.record(Swift.min(nanoseconds, 60_000_000_000)) }
    }

    var count: Int {
        histogram.withLock { Int($0.totalCount) }
    }

    /// The value at `percentile` (0–100), in microseconds.
    func microseconds(atPercentile percentile: Double) -> Double {
        histogram.withLock { Double($0.valueAtPercentile(percentile)) / 1_000 }
    }

    var maxMicroseconds: Double {
        histogram.withLock { Double($0.max) / 1_000 }
    }
}
