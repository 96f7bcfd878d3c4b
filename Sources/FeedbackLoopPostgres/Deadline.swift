#if Postgres
import Synchronization

/// Runs an operation in a task of its own under a deadline that ends the caller's wait without
/// waiting for the operation: a query whose answer never comes (a silent server, a partition)
/// ignores cancellation, so a deadline that had to await it would never fire.
///
/// Until the operation calls ``disarm()`` — the journal does once it has its connection — the
/// deadline or the caller's cancellation ends the wait: the caller gets the error, the operation
/// is cancelled and its outcome is dropped. After it, the operation runs to its end and the
/// caller gets its own outcome, so that an append that ran is never reported as failed.
final class Deadline<Value: Sendable>: Sendable {
    private struct State {
        var caller: CheckedContinuation<Value, any Error>?
        /// The caller has been answered, or is to be answered at once when it arrives.
        var answered: (any Error)?
        var done = false
        var disarmed = false
        var work: Task<Void, Never>?
        var timer: Task<Void, Never>?
    }

    private let state = Mutex(State())

    private init() {}

    /// What `operation` returns or throws, or `expired()` once `timeout` has passed (or a
    /// `CancellationError` once the caller is cancelled) before the operation disarmed the deadline.
    static func run(
        _ timeout: Duration, expired: @escaping @Sendable () -> any Error,
        _ operation: @escaping @Sendable (Deadline<Value>) async throws -> Value
    ) async throws -> Value {
        let deadline = Deadline()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { caller in
                deadline.start(caller, timeout: timeout, expired: expired, operation)
            }
        } onCancel: {
            deadline.expire(CancellationError())
        }
    }

    /// Ends the deadline: from now on the operation's own outcome is the caller's. False when the
    /// deadline had already passed; the operation must then stop at once.
    func disarm() -> Bool {
        let timer: Task<Void, Never>?? = state.withLock { state in
            guard !state.done else { return nil }
            state.disarmed = true
            return .some(state.timer)
        }
        guard let timer else { return false }
        timer?.cancel()
        return true
    }

    private func start(
        _ caller: CheckedContinuation<Value, any Error>, timeout: Duration, expired: @escaping @Sendable () -> any Error,
        _ operation: @escaping @Sendable (Deadline<Value>) async throws -> Value
    ) {
        let early: (any Error)? = state.withLock { state in
            if state.done { return state.answered ?? CancellationError() }
            state.caller = caller
            return nil
        }
        if let early {
            caller.resume(throwing: early)
            return
        }
        let timer = Task { [weak self] in
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self?.expire(expired())
        }
        let work = Task {
            let outcome: Result<Value, any Error>
            do {
                outcome = .success(try await operation(self))
            } catch {
                outcome = .failure(error)
            }
            self.finish(outcome)
        }
        let ended = state.withLock { state in
            state.timer = timer
            state.work = work
            return state.done
        }
        if ended {
            timer.cancel()
            work.cancel()
        }
    }

    /// Answers the caller with `error` unless the operation disarmed the deadline or ended.
    func expire(_ error: any Error) {
        let answer: (CheckedContinuation<Value, any Error>?, Task<Void, Never>?, Task<Void, Never>?)? = state.withLock { state in
            guard !state.done, !state.disarmed else { return nil }
            state.done = true
            state.answered = error
            defer { state.caller = nil }
            return (state.caller, state.work, state.timer)
        }
        guard let (caller, work, timer) = answer else { return }
        work?.cancel()
        timer?.cancel()
        caller?.resume(throwing: error)
    }

    private func finish(_ outcome: Result<Value, any Error>) {
        let answer: (CheckedContinuation<Value, any Error>?, Task<Void, Never>?)? = state.withLock { state in
            guard !state.done else { return nil }
            state.done = true
            defer { state.caller = nil }
            return (state.caller, state.timer)
        }
        guard let (caller, timer) = answer else { return }
        timer?.cancel()
        caller?.resume(with: outcome)
    }
}
#endif
