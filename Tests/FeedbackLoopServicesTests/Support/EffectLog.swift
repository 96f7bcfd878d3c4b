import FeedbackLoop

/// Records every effect lifecycle event a loop reports and lets a test wait for one.
///
/// A loop may report an effect's end a moment after `waitUntilIdle()` or `stop()` returned (the
/// instrumentation call follows the bookkeeping), so a test that checks what instrumentation saw
/// waits here rather than on the loop. Combine it *after* the instrumentation under test: when it
/// sees an event, the one before it already has.
final class EffectLog: Sendable {
    private typealias Waiter = (predicate: @Sendable ([EffectLifecycleEvent]) -> Bool, continuation: CheckedContinuation<Void, Never>)
    // The core's `Lock`, not `Mutex`: effects report from several threads at once, and under
    // `-DTSAN` a contended `Mutex` draws false ThreadSanitizer reports.
    private let state = Lock<(events: [EffectLifecycleEvent], waiters: [Waiter])>(([], []))

    func instrumentation<State: Sendable, Event: Sendable>() -> LoopInstrumentation<State, Event> {
        LoopInstrumentation(onEffect: { [self] event in record(event) })
    }

    private func record(_ event: EffectLifecycleEvent) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.events.append(event)
            let events = state.events
            let ready = state.waiters.filter { $0.predicate(events) }.map(\.continuation)
            state.waiters.removeAll { $0.predicate(events) }
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    /// Returns once the events recorded so far satisfy `predicate`.
    func waitUntil(_ predicate: @escaping @Sendable ([EffectLifecycleEvent]) -> Bool) async {
        await withCheckedContinuation { continuation in
            let satisfied = state.withLock { state -> Bool in
                if predicate(state.events) { return true }
                state.waiters.append((predicate, continuation))
                return false
            }
            if satisfied { continuation.resume() }
        }
    }

    /// Returns once `count` effects have finished, failed or been cancelled.
    func waitUntilEnded(count: Int) async {
        await waitUntil { events in events.count { $0.kind != .started } >= count }
    }

    /// Returns once an effect of the feedback at `feedback` has finished by itself.
    func waitUntilFinished(feedback: Int) async {
        await waitUntil { events in events.contains { $0.feedback == feedback && $0.kind == .finished } }
    }
}
