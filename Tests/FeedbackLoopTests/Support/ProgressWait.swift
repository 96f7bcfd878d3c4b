@testable import FeedbackLoop

extension LoopEngine {
    /// Returns once `condition`, evaluated under the lock, holds: checked now and again at each
    /// progress the loop makes (a drain ends, an effect's work ends, teardown finishes). For tests
    /// that must wait for a precise internal condition without polling.
    func waitUntil(_ condition: @escaping (LoopStateMachine<State, Event>) -> Bool) async {
        while true {
            var holds = false
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                holds = lock.withLock { $0.waitForProgress(waiter, unless: condition) }
                if holds { waiter.resume() }
            }
            if holds { return }
        }
    }
}
