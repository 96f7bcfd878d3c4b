import Foundation
import Testing

/// A wait that took longer than its bound: the test fails with what it was waiting for.
struct DeadlineExceeded: Error, CustomStringConvertible {
    let what: String
    let limit: Duration
    var description: String { "gave up waiting after \(limit): \(what)" }
}

/// Runs `body`, failing loudly if it has not finished within `limit`.
///
/// The bound exists only to turn a hang (a lost wake-up, an effect that never ends) into a clear
/// failure; a passing test never waits for the timer. The timer is a Dispatch deadline, so nothing
/// here sleeps.
func withDeadline<T: Sendable>(
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

/// A one-shot signal: `wait()` suspends until `open()` (or returns at once if already open).
final class Gate: Sendable {
    private let state = Locked<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    var isOpen: Bool { state.withLock { $0.open } }

    func wait() async {
        await withCheckedContinuation { continuation in
            let open = state.withLock { state -> Bool in
                if !state.open { state.waiters.append(continuation) }
                return state.open
            }
            if open { continuation.resume() }
        }
    }
}

/// Counts up and lets a test wait until a count is reached.
final class CountdownLatch: Sendable {
    private let state: Locked<(count: Int, waiters: [(Int, CheckedContinuation<Void, Never>)])>

    init() { state = Locked((0, [])) }

    var count: Int { state.withLock { $0.count } }

    func increment() {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count += 1
            let count = state.count
            let ready = state.waiters.filter { $0.0 <= count }.map(\.1)
            state.waiters.removeAll { $0.0 <= count }
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    /// Returns once the count has reached `target`.
    func wait(for target: Int) async {
        await withCheckedContinuation { continuation in
            let reached = state.withLock { state -> Bool in
                if state.count >= target { return true }
                state.waiters.append((target, continuation))
                return false
            }
            if reached { continuation.resume() }
        }
    }
}

/// Polls `condition` (yielding between checks) until it holds, failing loudly after `limit`. For
/// conditions no callback announces, such as a counter another thread updates.
func waitUntil(
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

/// A gate that blocks a thread (not a task) until opened: for holding the drain role on purpose.
final class DispatchGate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    func open() { semaphore.signal() }

    /// Blocks until `open()`; after 120 s it records a test failure and lets the thread go.
    func wait() {
        if semaphore.wait(timeout: .now() + 120) == .timedOut {
            Issue.record("a DispatchGate was never opened")
        }
    }
}
