import Foundation
import Testing

/// A wait that took longer than its bound: the test fails with what it was waiting for.
public struct DeadlineExceeded: Error, CustomStringConvertible {
    public let what: String
    public let limit: Duration
    public var description: String { "gave up waiting after \(limit): \(what)" }
}

/// Runs `body`, failing loudly if it has not finished within `limit`.
///
/// The bound exists only to turn a hang (a lost wake-up, an effect that never ends) into a clear
/// failure; a passing test never waits for the timer. The timer is a Dispatch deadline, so nothing
/// here sleeps.
public func withDeadline<T: Sendable>(
    _ what: String,
    limit: Duration = .seconds(120),
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let once = Locked<CheckedContinuation<T, any Error>?>(nil)
    return try await withCheckedThrowingContinuation { continuation in
        once.withLock { $0 = continuation }
        let task = Task {
            let result: Result<T, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            once.withLock { $0.take() }?.resume(with: result)
        }
        let nanoseconds = limit.components.seconds * 1_000_000_000 + limit.components.attoseconds / 1_000_000_000
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) {
            if let continuation = once.withLock({ $0.take() }) {
                task.cancel()
                continuation.resume(throwing: DeadlineExceeded(what: what, limit: limit))
            }
        }
    }
}

/// Polls `condition` (yielding between checks) until it holds, failing loudly after `limit`. For
/// conditions no callback announces, such as a counter another thread updates.
public func waitUntil(
    _ what: String,
    limit: Duration = .seconds(120),
    _ condition: @escaping @Sendable () -> Bool
) async throws {
    try await withDeadline(what, limit: limit) {
        while !condition() {
            try Task.checkCancellation()
            await Task.yield()
        }
    }
}

/// A one-shot signal: `wait()` suspends until `open()` (or returns at once if already open).
public final class Gate: Sendable {
    private let state = Locked<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    public init() {}

    public func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    public var isOpen: Bool { state.withLock { $0.open } }

    public func wait() async {
        await withCheckedContinuation { continuation in
            let open = state.withLock { state -> Bool in
                if !state.open { state.waiters.append(continuation) }
                return state.open
            }
            if open { continuation.resume() }
        }
    }
}

/// A gate that blocks a thread (not a task) until opened: for holding the drain role on purpose.
public final class DispatchGate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    public init() {}

    public func open() { semaphore.signal() }

    /// Blocks until `open()`; after 120 s it records a test failure and lets the thread go.
    public func wait() {
        if semaphore.wait(timeout: .now() + 120) == .timedOut {
            Issue.record("a DispatchGate was never opened")
        }
    }
}
