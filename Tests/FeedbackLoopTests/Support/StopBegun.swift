@testable import FeedbackLoop

extension Loop {
    /// Whether `stop()` has begun (its transition ran), for tests that must act between the
    /// start of a stop and its end; the public API only shows that a stop has finished.
    var stopHasBegun: Bool {
        engine.lock.withLock { !$0.phase.isRunning }
    }
}
