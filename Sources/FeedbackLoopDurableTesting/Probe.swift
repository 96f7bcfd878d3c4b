#if Durable && Testing
import FeedbackLoop

/// A log of what happened, in order, that a check can wait on without sleeping: ``wait(for:timeout:until:)``
/// resumes as soon as the condition holds, and fails loudly after a bound.
public final class Probe<Entry: Sendable>: Sendable {
    struct Waiter {
        let condition: @Sendable ([Entry]) -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }

    struct Guarded {
        var entries: [Entry] = []
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
    }

    let guarded = Lock(Guarded())

    /// An empty probe.
    public init() {}

    /// Everything recorded so far, in order.
    public var entries: [Entry] {
        guarded.withLock { $0.entries }
    }

    /// Records `entry` and wakes the waits it satisfies.
    public func record(_ entry: Entry) {
        let ready = guarded.withLock { guarded -> [CheckedContinuation<Bool, Never>] in
            guarded.entries.append(entry)
            let entries = guarded.entries
            var ready: [CheckedContinuation<Bool, Never>] = []
            for (id, waiter) in guarded.waiters where waiter.condition(entries) {
                ready.append(waiter.continuation)
                guarded.waiters[id] = nil
            }
            return ready
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    /// Returns once `condition` holds for the entries recorded so far.
    ///
    /// - Throws: ``DurabilityCheckFailure`` naming `what` if it has not held after `timeout`
    ///   (default 30 s: generous, because the whole test suite shares two cores and a starved
    ///   cooperative pool once held a passing check for more than 10 s).
    public func wait(
        for what: String, timeout: Duration = .seconds(30), until condition: @escaping @Sendable ([Entry]) -> Bool
    ) async throws {
        let satisfied = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let outcome = guarded.withLock { guarded -> Int? in
                if condition(guarded.entries) { return nil }
                let id = guarded.nextWaiter
                guarded.nextWaiter += 1
                guarded.waiters[id] = Waiter(condition: condition, continuation: continuation)
                return id
            }
            guard let id = outcome else { return continuation.resume(returning: true) }
            Task { [guarded] in
                try? await Task.sleep(for: timeout)
                let expired = guarded.withLock { $0.waiters.removeValue(forKey: id) }
                expired?.continuation.resume(returning: false)
            }
        }
        guard satisfied else {
            throw DurabilityCheckFailure("timed out after \(timeout) waiting for \(what); seen: \(entries)")
        }
    }
}

/// A durability check that did not hold: what was expected, and what happened instead.
public struct DurabilityCheckFailure: Error, CustomStringConvertible, Sendable {
    /// What failed.
    public let description: String

    /// A failure saying `description`.
    public init(_ description: String) {
        self.description = description
    }
}

/// Throws a ``DurabilityCheckFailure`` with `message` unless `condition` holds.
public func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw DurabilityCheckFailure(message()) }
}
#endif
