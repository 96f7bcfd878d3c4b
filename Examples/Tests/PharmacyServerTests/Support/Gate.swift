/// A one-shot signal carrying a value: `value` suspends until `open(with:)`.
///
/// A waiter whose task is cancelled stops waiting and throws `CancellationError`: a gate never
/// holds a cancelled task (a cancelled save in a gated back end ends, so a server that is
/// cancelled while its saves wait at the gate can still stop).
final class ValueGate<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiters: [Int: CheckedContinuation<Value, any Error>] = [:]
        var nextWaiter = 0
    }

    private let state = Locked(State())

    /// Opens the gate; only the first call counts.
    func open(with value: Value) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, any Error>] in
            guard state.value == nil else { return [] }
            state.value = value
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    /// Whether `open(with:)` was called.
    var isOpen: Bool { state.withLock { $0.value != nil } }

    /// The value, once the gate is open.
    ///
    /// - Throws: `CancellationError` if the waiting task is cancelled first.
    var value: Value {
        get async throws {
            let id = state.withLock { state in
                defer { state.nextWaiter += 1 }
                return state.nextWaiter
            }
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { waiter in
                    // Decided once, under the lock: a waiter is either kept (and resumed by
                    // `open` or the cancellation handler) or resumed here, never both.
                    let now = state.withLock { state -> Result<Value, any Error>? in
                        if let value = state.value { return .success(value) }
                        if Task.isCancelled { return .failure(CancellationError()) }
                        state.waiters[id] = waiter
                        return nil
                    }
                    if let now { waiter.resume(with: now) }
                }
            } onCancel: {
                let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
                waiter?.resume(throwing: CancellationError())
            }
        }
    }
}

/// A one-shot signal: `wait()` suspends until `open()`.
typealias Gate = ValueGate<Void>

extension ValueGate where Value == Void {
    func open() { open(with: ()) }
    func wait() async throws { try await value }
}
