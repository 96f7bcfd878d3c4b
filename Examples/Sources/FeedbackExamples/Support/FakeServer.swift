import Synchronization

/// The machinery behind the examples' fake services: a simulated network delay on an injected
/// clock, failures injected on demand, and a record of every call.
///
/// Tests give it a `TestClock` and decide exactly which call fails; the command-line runner gives
/// it a `ContinuousClock` and a few tens of milliseconds. A call that is cancelled while it waits
/// out its latency ends with `CancellationError` and is recorded as ``FakeCall/Outcome/cancelled``
/// — the way to check that a loop really cancelled an effect.
///
/// Thread-safe: calls may overlap, from any task.
public final class FakeServer<Operation: Hashable & Sendable>: Sendable {
    private struct Storage {
        var latency: Duration
        var failuresByOperation: [Operation: Int]
        var failuresOfAnyCall: Int
        var started: [Operation] = []
        var calls: [FakeCall<Operation>] = []
    }

    private let clock: any Clock<Duration>
    private let storage: Mutex<Storage>

    /// A server that answers after `latency` on `clock`, failing the first `failing[operation]`
    /// calls of each listed operation.
    public init(
        latency: Duration = .zero,
        clock: any Clock<Duration> = ContinuousClock(),
        failing: [Operation: Int] = [:]
    ) {
        self.clock = clock
        self.storage = Mutex(Storage(latency: latency, failuresByOperation: failing, failuresOfAnyCall: 0))
    }

    /// How long each call takes. Changing it affects calls that start afterwards.
    public var latency: Duration {
        get { storage.withLock { $0.latency } }
        set { storage.withLock { $0.latency = newValue } }
    }

    /// Makes the next `times` calls of `operation` fail with ``FakeServiceError``.
    public func failNext(_ operation: Operation, times: Int = 1) {
        storage.withLock { $0.failuresByOperation[operation, default: 0] += times }
    }

    /// Makes the next `times` calls, whatever their operation, fail with ``FakeServiceError``.
    public func failNextCalls(_ times: Int = 1) {
        storage.withLock { $0.failuresOfAnyCall += times }
    }

    /// The operations called so far, in the order they started.
    public var started: [Operation] {
        storage.withLock { $0.started }
    }

    /// The calls that have ended so far, in the order they ended.
    public var calls: [FakeCall<Operation>] {
        storage.withLock { $0.calls }
    }

    /// Runs one call: waits out the latency, then fails if a failure was injected, otherwise
    /// returns what `answer` returns (or throws what it throws).
    ///
    /// - Throws: `CancellationError` if the calling task is cancelled before the answer;
    ///   ``FakeServiceError`` for an injected failure; whatever `answer` throws.
    public func perform<Answer>(_ operation: Operation, answer: () throws -> Answer) async throws -> Answer {
        let latency = storage.withLock { storage in
            storage.started.append(operation)
            return storage.latency
        }
        do {
            if latency > .zero {
                try await clock.sleep(for: latency)
            }
            try Task.checkCancellation()
        } catch {
            record(operation, .cancelled)
            throw CancellationError()
        }
        let injected = storage.withLock { storage -> Bool in
            if storage.failuresOfAnyCall > 0 {
                storage.failuresOfAnyCall -= 1
                return true
            }
            if let remaining = storage.failuresByOperation[operation], remaining > 0 {
                storage.failuresByOperation[operation] = remaining - 1
                return true
            }
            return false
        }
        if injected {
            record(operation, .failed)
            throw FakeServiceError(operation: "\(operation)")
        }
        do {
            let value = try answer()
            record(operation, .succeeded)
            return value
        } catch {
            record(operation, .failed)
            throw error
        }
    }

    private func record(_ operation: Operation, _ outcome: FakeCall<Operation>.Outcome) {
        storage.withLock { $0.calls.append(FakeCall(operation: operation, outcome: outcome)) }
    }
}

/// One call a ``FakeServer`` answered, failed or saw cancelled.
public struct FakeCall<Operation: Hashable & Sendable>: Hashable, Sendable, CustomStringConvertible {
    /// How a call ended.
    public enum Outcome: String, Hashable, Sendable {
        case succeeded
        case failed
        case cancelled
    }

    public var operation: Operation
    public var outcome: Outcome

    public init(operation: Operation, outcome: Outcome) {
        self.operation = operation
        self.outcome = outcome
    }

    public var description: String { "\(operation): \(outcome)" }
}

/// The failure a ``FakeServer`` injects: what a real service's network error would be.
public struct FakeServiceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The operation that failed.
    public var operation: String

    public init(operation: String) {
        self.operation = operation
    }

    public var description: String { "the service is unavailable (\(operation) failed)" }
}
