import FeedbackLoop
import Foundation
import Synchronization

/// Runs `body(index)` on `count` new threads at once and returns when all have returned.
///
/// Senders run on their own threads, never on the cooperative pool: a sender spinning through a
/// million `send` calls on one of the pool's two threads here would starve the actor backend's
/// drain of half the machine and measure the scheduler, not the loop.
func onDedicatedThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        let remaining = Countdown(count, whenZero: { done.resume() })
        for index in 0..<count {
            let thread = Thread {
                body(index)
                remaining.tick()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }
}

/// Runs `body` on a new thread and returns its result.
func onDedicatedThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
    let result = Lock<Result?>(nil)
    await onDedicatedThreads(1) { _ in
        let value = body()
        result.withLock { $0 = value }
    }
    return result.withLock { $0! }
}

/// Calls `whenZero` once, on the thread whose `tick()` brings the count to zero.
final class Countdown: Sendable {
    private let remaining: Atomic<Int>
    private let whenZero: @Sendable () -> Void

    init(_ count: Int, whenZero: @escaping @Sendable () -> Void) {
        self.remaining = Atomic(count)
        self.whenZero = whenZero
    }

    func tick() {
        if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { whenZero() }
    }
}
