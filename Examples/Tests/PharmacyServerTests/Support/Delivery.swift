/// Holds the values a callback delivers, such as a service's shutdown report, and lets a test
/// wait for a number of them.
final class Delivery<Value: Sendable>: Sendable {
    private struct State {
        var values: [Value] = []
        var waiters: [Int: (count: Int, waiter: CheckedContinuation<Void, any Error>)] = [:]
        var nextWaiter = 0
    }

    private let state = Locked(State())

    func deliver(_ value: Value) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.values.append(value)
            let count = state.values.count
            let ready = state.waiters.filter { $0.value.count <= count }
            for id in ready.keys { state.waiters[id] = nil }
            return ready.values.map(\.waiter)
        }
        for waiter in ready { waiter.resume() }
    }

    /// Every value delivered so far; a callback that must run once leaves exactly one.
    var values: [Value] { state.withLock { $0.values } }

    /// Returns once at least `count` values were delivered.
    ///
    /// - Throws: `CancellationError` if the waiting task is cancelled first. Wrap it in
    ///   ``bounded(_:within:diagnostics:_:)`` to bound it.
    func waitForCount(_ count: Int) async throws {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
                // Decided once, under the lock: a waiter is either kept (and resumed by
                // `deliver` or the cancellation handler) or resumed here, never both.
                let now = state.withLock { state -> Result<Void, any Error>? in
                    if state.values.count >= count { return .success(()) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = (count, waiter)
                    return nil
                }
                if let now { waiter.resume(with: now) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.waiter.resume(throwing: CancellationError())
        }
    }
}
