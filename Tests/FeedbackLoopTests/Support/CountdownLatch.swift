import Foundation
import Testing

/// Counts up and lets a test wait until a count is reached.
final class CountdownLatch: Sendable {
    private let state: Locked<(count: Int, waiters: [(Int, CheckedContinuation<Void, Never>)])>

    init() { state = Locked((0, [])) }

    var count: Int { state.withLock { $0.count } }

    func increment() {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count += 1
            let count = state.count
            let ready = state.waiters.filter { $0.0 <= count }.map(\.1)
            state.waiters.removeAll { $0.0 <= count }
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    /// Returns once the count has reached `target`.
    func wait(for target: Int) async {
        await withCheckedContinuation { continuation in
            let reached = state.withLock { state -> Bool in
                if state.count >= target { return true }
                state.waiters.append((target, continuation))
                return false
            }
            if reached { continuation.resume() }
        }
    }
}
