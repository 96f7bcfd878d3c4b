import Dispatch
import Foundation


/// A wait that did not end within its bound: what it waited for, how long, and what the server
/// looked like at that moment.
struct WaitTimedOut: Error, CustomStringConvertible {
    var what: String
    var limit: Duration
    var diagnostics: String

    var description: String {
        "gave up after \(limit) waiting for \(what)" + (diagnostics.isEmpty ? "" : "\n" + diagnostics)
    }
}

/// The bound of every wait in these tests that does not name its own. A passing suite takes
/// seconds; this is long enough for a loaded 2-core CI machine and well inside the suites' time
/// limit, so that a hang fails as the wait that hung, not as an anonymous time limit.
let waitLimit: Duration = .seconds(60)

/// Awaits `body` for at most `limit`, and turns a hang into a failure that names what it waited
/// for.
///
/// Past the limit it writes `error: gave up after … waiting for <what>` and `diagnostics()` to
/// standard error at once, cancels `body` and throws ``WaitTimedOut``. The timer is a Dispatch
/// timer, so a stuck or starved cooperative pool cannot silence it, and `body` runs in a task of
/// its own, so a wait that ignores cancellation cannot hold the caller: the test fails and ends.
/// Cancelling the caller cancels `body`.
func bounded<T: Sendable>(
    _ what: String,
    within limit: Duration = waitLimit,
    diagnostics: @escaping @Sendable () -> String = { "" },
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let outcome = Outcome<T>()
    let work = Task {
        do {
            outcome.settle(.success(try await body()))
        } catch {
            outcome.settle(.failure(error))
        }
    }
    let timer = DispatchWorkItem {
        let timeout = WaitTimedOut(what: what, limit: limit, diagnostics: diagnostics())
        guard outcome.settle(.failure(timeout)) else { return }
        FileHandle.standardError.write(Data("error: \(timeout)\n".utf8))
        work.cancel()
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + limit.dispatchInterval, execute: timer)
    defer { timer.cancel() }
    return try await withTaskCancellationHandler {
        try await outcome.value
    } onCancel: {
        work.cancel()
    }
}

extension Duration {
    var dispatchInterval: DispatchTimeInterval {
        .milliseconds(Int(components.seconds) * 1000 + Int(components.attoseconds / 1_000_000_000_000_000))
    }
}

/// A result that is settled once; later settlements are ignored.
private final class Outcome<T: Sendable>: Sendable {
    private let state = Locked<(result: Result<T, any Error>?, waiter: CheckedContinuation<T, any Error>?)>((nil, nil))

    /// Settles with `result`; `false` if it was already settled.
    @discardableResult
    func settle(_ result: Result<T, any Error>) -> Bool {
        let (settled, waiter) = state.withLock { state -> (Bool, CheckedContinuation<T, any Error>?) in
            guard case .none = state.result else { return (false, nil) }
            state.result = result
            defer { state.waiter = nil }
            return (true, state.waiter)
        }
        waiter?.resume(with: result)
        return settled
    }

    var value: T {
        get async throws {
            try await withCheckedThrowingContinuation { waiter in
                let result = state.withLock { state -> Result<T, any Error>? in
                    if case .none = state.result { state.waiter = waiter }
                    return state.result
                }
                if let result { waiter.resume(with: result) }
            }
        }
    }
}
