import FeedbackLoop

/// A clock that moves only when the test calls ``advance(by:)``, and that lets the test wait
/// until someone sleeps on it — so a test knows a grace period has started without sleeping.
final class ManualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var id: Int
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID = 0
        var sleepers: [Sleeper] = []
        var sleeperWaiters: [CheckedContinuation<Void, Never>] = []
    }

    // The core's `Lock`: under -DTSAN a pthread mutex, which ThreadSanitizer understands
    // (it misreads `Synchronization.Mutex` under contention).
    private let state = Lock(State())

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }

    /// The deadlines of the sleeps in progress, earliest first.
    var pendingDeadlines: [Instant] {
        state.withLock { $0.sleepers.map(\.deadline).sorted() }
    }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { state -> Int in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (due, waiters) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                    if Task.isCancelled || deadline <= state.now { return (true, []) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    defer { state.sleeperWaiters = [] }
                    return (false, state.sleeperWaiters)
                }
                for waiter in waiters { waiter.resume() }
                if due {
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume()
                    }
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has come.
    func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Returns once a sleep until exactly `deadline` is in progress.
    func waitForSleeper(until deadline: Instant) async {
        while true {
            let found = state.withLock { $0.sleepers.contains { $0.deadline == deadline } }
            if found { return }
            await waitForNextSleeper()
        }
    }

    /// Returns when the next sleep begins.
    private func waitForNextSleeper() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            state.withLock { $0.sleeperWaiters.append(waiter) }
        }
    }

    /// Returns once at least one sleep is in progress.
    func waitForSleeper() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let sleeping = state.withLock { state -> Bool in
                if !state.sleepers.isEmpty { return true }
                state.sleeperWaiters.append(waiter)
                return false
            }
            if sleeping { waiter.resume() }
        }
    }
}
