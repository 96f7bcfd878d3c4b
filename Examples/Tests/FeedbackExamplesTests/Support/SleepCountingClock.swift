import FeedbackLoop
import Clocks
import Synchronization
import Testing

/// A `TestClock` that also counts the sleeps on it, so a test can wait until an effect is
/// really asleep before advancing time.
///
/// Without this, `advance(by:)` could run before a freshly started timer effect has called
/// `sleep`, and the timer would then wait a full period more. A sleep is counted as started just
/// before it is registered with the `TestClock` and as ended after the `TestClock` let it go, so
/// once `started` reaches the expected number and `active` the expected count, the registered
/// sleeps are exactly the expected ones.
final class SleepCountingClock: Clock, Sendable {
    typealias Duration = Swift.Duration
    typealias Instant = TestClock<Duration>.Instant

    let base = TestClock<Duration>()
    private let counts = Lock((started: 0, active: 0))

    var now: Instant { base.now }
    var minimumResolution: Duration { base.minimumResolution }

    /// Sleeps started so far.
    var started: Int { counts.withLock { $0.started } }
    /// Sleeps in progress.
    var active: Int { counts.withLock { $0.active } }

    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        counts.withLock {
            $0.started += 1
            $0.active += 1
        }
        defer { counts.withLock { $0.active -= 1 } }
        try await base.sleep(until: deadline, tolerance: tolerance)
    }

    /// Waits until `started` sleeps have started and exactly `active` are in progress.
    func waitForSleeps(
        started: Int, active: Int = 1, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try await eventually("\(started) sleeps started, \(active) asleep", sourceLocation: sourceLocation) {
            counts.withLock { $0.started == started && $0.active == active }
        }
    }

    func advance(by duration: Duration) async {
        await base.advance(by: duration)
    }
}

