import Synchronization

/// Holds the one value a callback delivers, such as a service's shutdown report.
final class Delivery<Value: Sendable>: Sendable {
    private let state = Mutex<[Value]>([])

    func deliver(_ value: Value) {
        state.withLock { $0.append(value) }
    }

    /// Every value delivered so far; a callback that must run once leaves exactly one.
    var values: [Value] { state.withLock { $0 } }
}
