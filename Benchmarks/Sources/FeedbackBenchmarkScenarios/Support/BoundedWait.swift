import FeedbackLoop

/// Waits for `operation`, but fails with ``ScenarioFailure`` after `seconds` instead of hanging: a
/// loop that loses an event would otherwise leave a benchmark waiting forever for it.
///
/// The operation runs in its own task so that the deadline holds even when the operation cannot
/// be cancelled (a continuation nobody will resume); after a timeout that task is abandoned, which
/// is acceptable only because the run then fails.
func withDeadline<Result: Sendable>(
    seconds: Int,
    _ what: String,
    _ operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    let outcome = Once<Swift.Result<Result, any Error>>()
    let operationTask = Task {
        do { outcome.set(.success(try await operation())) } catch { outcome.set(.failure(error)) }
    }
    let timer = Task {
        try await Task.sleep(for: .seconds(seconds))
        outcome.set(.failure(ScenarioFailure("\(what) did not finish within \(seconds) s")))
    }
    let result = await outcome.value
    timer.cancel()
    if case .failure = result { operationTask.cancel() }
    return try result.get()
}

/// A value set once and awaited by one reader.
final class Once<Value: Sendable>: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<Value, Never>)
        case set(Value)
        case taken
    }

    private let state = Lock(State.empty)

    /// Sets the value; later calls are ignored.
    func set(_ value: Value) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, Never>? in
            switch state {
            case .empty:
                state = .set(value)
                return nil
            case .waiting(let waiter):
                state = .taken
                return waiter
            case .set, .taken:
                return nil
            }
        }
        waiter?.resume(returning: value)
    }

    /// The value, once set. Only one caller may wait.
    var value: Value {
        get async {
            await withCheckedContinuation { (waiter: CheckedContinuation<Value, Never>) in
                let ready = state.withLock { state -> Value? in
                    if case .set(let value) = state {
                        state = .taken
                        return value
                    }
                    state = .waiting(waiter)
                    return nil
                }
                if let ready { waiter.resume(returning: ready) }
            }
        }
    }
}
