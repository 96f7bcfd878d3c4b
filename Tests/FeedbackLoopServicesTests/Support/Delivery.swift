import FeedbackLoop

/// Holds the values a callback delivers, such as a service's shutdown report, and lets a test
/// wait for a number of them.
final class Delivery<Value: Sendable>: Sendable {
    // The core's `Lock`: under -DTSAN a pthread mutex, which ThreadSanitizer understands
    // (it misreads `Synchronization.Mutex` under contention).
    private let state = Lock<(values: [Value], waiters: [(count: Int, waiter: CheckedContinuation<Void, Never>)])>(([], []))

    func deliver(_ value: Value) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.values.append(value)
            let count = state.values.count
            let ready = state.waiters.filter { $0.count <= count }.map(\.waiter)
            state.waiters.removeAll { $0.count <= count }
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    /// Every value delivered so far; a callback that must run once leaves exactly one.
    var values: [Value] { state.withLock { $0.values } }

    /// Returns once at least `count` values were delivered.
    func waitForCount(_ count: Int) async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.values.count >= count { return true }
                state.waiters.append((count, waiter))
                return false
            }
            if ready { waiter.resume() }
        }
    }
}
