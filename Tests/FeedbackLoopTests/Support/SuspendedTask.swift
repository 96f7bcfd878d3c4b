/// A real continuation for driving the state machines directly, whose transitions take waiters:
/// a task suspended until the test resumes it. A test resumes every one it made, as the engine
/// does after the lock, so that none leaks.
func suspendedTask() async -> CheckedContinuation<Void, Never> {
    await withCheckedContinuation { (handOver: CheckedContinuation<CheckedContinuation<Void, Never>, Never>) in
        Task {
            await withCheckedContinuation { (suspended: CheckedContinuation<Void, Never>) in
                handOver.resume(returning: suspended)
            }
        }
    }
}
