@testable import FeedbackLoop

extension Loop {
    /// `sendAndWait` calls parked for room in a full bounded queue: what a test waits for before
    /// it cancels one, so that it knows the call is waiting rather than about to be queued.
    var parkedSubmits: Int {
        engine.lock.withLock { $0.intake.parked.count }
    }
}
