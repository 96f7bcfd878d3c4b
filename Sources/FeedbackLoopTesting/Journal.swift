#if Testing
import FeedbackLoop
import FeedbackLoopRecording

/// Everything a ``TestLoop``'s loop did, as its instrumentation reported it, and the means to
/// wait — with a deadline — until something new happens.
///
/// The hooks run on the loop's drain thread and on effects' tasks; the test reads on its own
/// task. Every change bumps ``Contents/version`` and wakes the waiters, which re-check their
/// condition on their own task: nothing but a continuation is resumed from a hook.
final class Journal<State: Sendable, Event: Sendable>: Sendable {
    struct Contents {
        /// Every transition, in the order the loop reduced them.
        var transitions: [Transition<State, Event>] = []
        /// Effects that started and have not finished, failed or been cancelled, by id.
        var running: [UInt64: EffectLifecycleEvent] = [:]
        /// Effect failures not yet reported to the test.
        var failures: [EffectLifecycleEvent] = []
        /// Tokens of background operations that have completed (see ``TestLoop``'s bounded waits).
        var completed: Set<UInt64> = []
        /// Bumped on every change.
        var version: UInt64 = 0

        fileprivate var waiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        fileprivate var expired: Set<UInt64> = []
        fileprivate var nextID: UInt64 = 0
    }

    private let contents = Locked(Contents())

    var instrumentation: LoopInstrumentation<State, Event> {
        LoopInstrumentation(
            onTransition: { [self] before, event, after in
                update { $0.transitions.append(Transition(before: before, event: event, after: after)) }
            },
            onEffect: { [self] lifecycle in
                update { contents in
                    switch lifecycle.kind {
                    case .started:
                        contents.running[lifecycle.effect] = lifecycle
                    case .finished, .cancelled:
                        contents.running[lifecycle.effect] = nil
                    case .failed:
                        contents.running[lifecycle.effect] = nil
                        contents.failures.append(lifecycle)
                    }
                }
            })
    }

    func read<Result>(_ body: (inout Contents) -> Result) -> Result {
        contents.withLock(body)
    }

    /// Applies `change`, bumps the version and wakes every waiter.
    func update(_ change: (inout Contents) -> Void) {
        let waiters = contents.withLock { contents in
            change(&contents)
            contents.version &+= 1
            defer { contents.waiters.removeAll() }
            return Array(contents.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// A token for a background operation, to be passed to ``complete(_:)``.
    func makeToken() -> UInt64 {
        contents.withLock { contents in
            contents.nextID &+= 1
            return contents.nextID
        }
    }

    func complete(_ token: UInt64) {
        update { $0.completed.insert(token) }
    }

    /// Returns the first non-nil result of `check`, re-evaluated after every change, or `nil`
    /// once `deadline` has passed.
    nonisolated(nonsending) func wait<Result>(
        until deadline: ContinuousClock.Instant,
        for check: (inout Contents) -> Result?
    ) async -> Result? {
        while true {
            let (result, version) = contents.withLock { contents in (check(&contents), contents.version) }
            if let result { return result }
            guard await waitForChange(after: version, until: deadline) else {
                // One last look: the change may have landed just as the deadline passed.
                return contents.withLock { check(&$0) }
            }
        }
    }

    /// Suspends until the version moves past `version` (`true`) or `deadline` passes (`false`).
    private func waitForChange(after version: UInt64, until deadline: ContinuousClock.Instant) async -> Bool {
        let id = makeToken()
        let timer = Task { [self] in
            guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
            expire(id)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { (waiter: CheckedContinuation<Bool, Never>) in
            let outcome = contents.withLock { contents -> Bool? in
                if contents.expired.remove(id) != nil { return false }
                if contents.version != version { return true }
                contents.waiters[id] = waiter
                return nil
            }
            if let outcome { waiter.resume(returning: outcome) }
        }
    }

    private func expire(_ id: UInt64) {
        let waiter = contents.withLock { contents -> CheckedContinuation<Bool, Never>? in
            if let waiter = contents.waiters.removeValue(forKey: id) { return waiter }
            // The timer won the race with registration: let the waiter see it has expired.
            contents.expired.insert(id)
            return nil
        }
        waiter?.resume(returning: false)
    }
}
#endif
