import FeedbackLoop
import Foundation

/// Runs `body(index)` on `count` dedicated threads at once and returns when all have finished.
///
/// Tests that hammer a loop from many threads, or that block a thread on purpose, use real
/// threads rather than tasks: blocking the few threads of Swift's cooperative pool would starve
/// the actor backend (and every other test running in parallel) instead of testing it.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    let latch = CountdownLatch()
    for index in 0..<count {
        let thread = Thread {
            lowerThisThreadsPriority()
            body(index)
            latch.increment()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    await latch.wait(for: count)
}

/// Suspends until the current task is cancelled — an effect that runs until the loop stops it.
func suspendUntilCancelled() async {
    let state = Locked<(waiter: CheckedContinuation<Void, Never>?, cancelled: Bool)>((nil, false))
    await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
            let cancelled = state.withLock { state -> Bool in
                if !state.cancelled { state.waiter = continuation }
                return state.cancelled
            }
            if cancelled { continuation.resume() }
        }
    } onCancel: {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.cancelled = true
            defer { state.waiter = nil }
            return state.waiter
        }?.resume()
    }
}

extension Loop {
    /// Returns once the loop has handled everything queued before this call, without sending an
    /// event: an observer joins through the same queue, and its first call marks the spot.
    func barrier() async {
        let reached = Gate()
        let observation = observe { _ in reached.open() }
        await reached.wait()
        observation.cancel()
    }
}

/// The calling thread's identity.
func currentThreadID() -> UInt {
    UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(bitPattern: UInt(pthread_self()))))
}

/// Lowers the calling thread's scheduling priority (nice 10). The load tests' sending threads
/// would otherwise take both cores from the cooperative pool for tens of seconds, starving every
/// other test's tasks (an actor loop's drain, an effect waiting to start) past their deadlines;
/// niced, they still finish, with whatever CPU the rest of the suite leaves.
func lowerThisThreadsPriority() {
    #if os(Linux)
    // On Linux the nice value is per thread, and `who == 0` names the calling thread.
    _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
    #endif
}
