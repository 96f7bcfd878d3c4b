@testable import FeedbackLoop

extension Loop {
    /// Events and `sendAndWait` calls waiting in the queue, and `sendAndWait` calls parked for
    /// room in a bounded one: what a test waits for before it stops the loop, so that it knows
    /// which of its sends stop will discard.
    var waiting: (queued: Int, parked: Int) {
        engine.lock.withLock { ($0.intake.items.count, $0.intake.parked.count) }
    }
}
