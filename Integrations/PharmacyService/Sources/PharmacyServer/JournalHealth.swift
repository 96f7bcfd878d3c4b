import FeedbackLoopDurable
import Synchronization

/// Reads of the sessions' journal with a deadline, so that an unreachable database is reported
/// within ``timeout`` rather than after however long its client keeps retrying.
final class JournalHealth: Sendable {
    /// The journal did not answer in time, or failed.
    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// How long a bounded journal read may take.
    let timeout: Duration

    init(timeout: Duration) {
        self.timeout = timeout
    }

    /// `operation`'s result, or ``Unavailable`` if it has not returned within ``timeout`` (it is
    /// then cancelled, and left to end in the background) or threw.
    ///
    /// The caller is not held by an operation that ignores cancellation: a query waiting for a
    /// connection to a database that does not answer.
    func bounded<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let once = Once<Result<T, any Error>>()
        let work = Task {
            let result = await Result(awaiting: operation)
            once.settle(result)
        }
        let timer = Task { [timeout] in
            try await Task.sleep(for: timeout)
            once.settle(.failure(Unavailable(description: "the journal did not answer within \(timeout)")))
            work.cancel()
        }
        defer { timer.cancel() }
        switch await once.value {
        case .success(let value): return value
        case .failure(let error as Unavailable): throw error
        case .failure(let error): throw Unavailable(description: "\(error)")
        }
    }
}

/// A value settled once, awaited by one caller.
private final class Once<Value: Sendable>: Sendable {
    private let state = Mutex<(value: Value?, waiter: CheckedContinuation<Value, Never>?)>((nil, nil))

    func settle(_ value: Value) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, Never>? in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: value)
    }

    var value: Value {
        get async {
            await withCheckedContinuation { waiter in
                let value = state.withLock { state -> Value? in
                    if state.value == nil { state.waiter = waiter }
                    return state.value
                }
                if let value { waiter.resume(returning: value) }
            }
        }
    }
}

extension Result where Failure == any Error {
    init(awaiting body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
