import Synchronization

/// A one-shot signal carrying a value: `value` suspends until `open(with:)`.
final class ValueGate<Value: Sendable>: Sendable {
    private let state = Mutex<(value: Value?, waiters: [CheckedContinuation<Value, Never>])>((nil, []))

    func open(with value: Value) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, Never>] in
            guard state.value == nil else { return [] }
            state.value = value
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    /// Whether `open(with:)` was called.
    var isOpen: Bool { state.withLock { $0.value != nil } }

    var value: Value {
        get async {
            await withCheckedContinuation { waiter in
                let value = state.withLock { state -> Value? in
                    if state.value == nil { state.waiters.append(waiter) }
                    return state.value
                }
                if let value { waiter.resume(returning: value) }
            }
        }
    }
}

/// A one-shot signal: `wait()` suspends until `open()`.
typealias Gate = ValueGate<Void>

extension ValueGate where Value == Void {
    func open() { open(with: ()) }
    func wait() async { await value }
}
