import Synchronization

/// Collects the values a callback delivers.
final class Delivery<Value: Sendable>: Sendable {
    private let state = Mutex<[Value]>([])

    func deliver(_ value: Value) {
        state.withLock { $0.append(value) }
    }

    var values: [Value] { state.withLock { $0 } }
}
