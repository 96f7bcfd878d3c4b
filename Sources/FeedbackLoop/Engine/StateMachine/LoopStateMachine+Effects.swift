// The registry of running effects and the books kept as they start and end.

extension LoopStateMachine {
    /// A started effect joins the registry, unless its work already ended on another thread.
    /// Returns the entry when it was not kept, for the caller to release after the lock.
    @inlinable
    mutating func register(_ effect: RunningEffect) -> RunningEffect? {
        statistics.effectsStarted += 1
        if !endedBeforeRegistration.isEmpty && endedBeforeRegistration.remove(effect.handle.id) != nil { return effect }
        effects.insert(effect)
        return nil
    }

    /// What to do after the lock once effects ended: release their registry entries first (their
    /// `deinit`s may run user code), then resume whoever waited for idle or for stop.
    @usableFromInline
    struct Followup {
        /// The entry of the effect whose work ended; the effects teardown ended, in
        /// `releasedAtTeardown`. Apart, so that an effect's end (once per effect) fills no array,
        /// which cost an allocation per effect.
        @usableFromInline var released: RunningEffect?
        @usableFromInline var releasedAtTeardown: [RunningEffect] = []
        @usableFromInline var idle: [CheckedContinuation<Void, Never>] = []
        @usableFromInline var stopped: [StopWaiter] = []
        /// Observers that joined during the stop, and the final state they get.
        @usableFromInline var lateObservers: [ObserverEntry<State>] = []
        @usableFromInline var finalState: State?
        @inlinable init() {}

        @inlinable
        mutating func perform() {
            released = nil
            releasedAtTeardown = []
            if let finalState {
                for observer in lateObservers {
                    observer.onState(finalState)
                    observer.onStop?()
                }
            }
            lateObservers = []
            finalState = nil
            for waiter in idle { waiter.resume() }
            for waiter in stopped { waiter.continuation.resume() }
        }
    }

    /// Counts how an effect came out: `.finished` or `.failed` when it ended by itself. A
    /// cancelled effect was counted when the loop cancelled it.
    @inlinable
    mutating func count(_ outcome: EffectLifecycleEvent.Kind) {
        switch outcome {
        case .finished: statistics.effectsFinished += 1
        case .failed: statistics.effectsFailed += 1
        case .cancelled: statistics.effectsCancelled += 1
        case .started: preconditionFailure("LoopStateMachine.count: .started is not an outcome")
        }
    }

    /// An effect's work is over (its task returned, its callback finished or was cancelled): it
    /// leaves the registry, and waiters for idle and stop may go.
    @inlinable
    mutating func workEnded(id: UInt64) -> Followup {
        var followup = Followup()
        if let entry = removeEffect(id) {
            followup.released = entry
        } else {
            endedBeforeRegistration.insert(id)
        }
        wakeWaiters(&followup)
        return followup
    }

    /// Takes an effect out of the registry; after a burst of effects, the emptied table goes too.
    @inlinable
    mutating func removeEffect(_ id: UInt64) -> RunningEffect? {
        let entry = effects.remove(id)
        effects.shrinkIfEmpty(keeping: Self.keptQueueCapacity)
        return entry
    }

    @inlinable
    mutating func wakeWaiters(_ followup: inout Followup) {
        if phase == .tornDown {
            if effects.isEmpty {
                phase.effectsEnded()
                followup.stopped += stopWaiters
                stopWaiters = []
            } else if effects.count == 1, let last = effects.values.first?.handle.id, stopWaiters.contains(where: { $0.except == last }) {
                // Only the effect that called `stop()` is left: its own waiters may go.
                followup.stopped += stopWaiters.filter { $0.except == last }
                stopWaiters.removeAll { $0.except == last }
            }
        }
        followup.idle = takeReadyWaiters()
    }

    /// A `.send` effect: counted as started and finished at once, its events queued behind the
    /// current batch (the drain role is held, so the queue is never idle). Returns the events
    /// dropped because stop has begun.
    @inlinable
    mutating func sendEffect(_ events: [Event]) -> [Event] {
        sendEffect(events, handle: nil)
    }

    /// A child feature's `.send` effect: its events carry `handle`, finished, for the child's
    /// life (see ``ChildLife``).
    @inlinable
    mutating func sendEffect(_ events: [Event], from handle: EffectHandle) -> [Event] {
        sendEffect(events, handle: handle)
    }

    /// Inlined into both, so that the loop's own `.send` effects (W2) carry no handle at all.
    @inlinable
    @inline(__always)
    mutating func sendEffect(_ events: [Event], handle: EffectHandle?) -> [Event] {
        statistics.effectsStarted += 1
        statistics.effectsFinished += 1
        var dropped: [Event] = []
        for event in events {
            if case .dropped = enqueue(.event(event, handle), external: false) { dropped.append(event) }
        }
        return dropped
    }

    /// A `.send` effect of a loop that propagates `ServiceContext`: its events carry `cause`.
    @inlinable
    mutating func sendEffect(_ events: [Event], cause: EventCause<State>) -> [Event] {
        statistics.effectsStarted += 1
        statistics.effectsFinished += 1
        var dropped: [Event] = []
        for event in events {
            if case .dropped = enqueue(.traced(event, cause), external: false) { dropped.append(event) }
        }
        return dropped
    }

    /// The loop cancelled a running effect: counted, and its registry entry returned so that the
    /// caller can stop it after the lock. A callback effect's work ends with its cancellation; a
    /// task's when it returns.
    @inlinable
    mutating func cancelled(_ handle: EffectHandle) -> (RunningEffect?, Followup) {
        count(.cancelled)
        if handle.isTask { return (effects[handle.id], Followup()) }
        // A callback effect's work ends with its cancellation: its entry leaves the registry now,
        // in one lookup, and goes back to the caller, who stops it and releases it after the lock.
        guard let entry = removeEffect(handle.id) else { return (nil, Followup()) }
        var followup = Followup()
        wakeWaiters(&followup)
        return (entry, followup)
    }

    /// A `.run` effect's task returned; `outcome` is how it ended, if it ran to its end (a
    /// cancelled one was counted when it was cancelled).
    @inlinable
    mutating func taskReturned(_ id: UInt64, outcome: EffectLifecycleEvent.Kind?) -> Followup {
        if let outcome { count(outcome) }
        return workEnded(id: id)
    }

    /// An effect finished by itself, with `item` (its last event) as its last word, queued. A
    /// task's work lasts until it returns; a callback effect's ends here.
    @inlinable
    mutating func finished(_ handle: EffectHandle, sending item: QueueItem<State, Event>?) -> (Followup, EnqueueAction) {
        count(.finished)
        let enqueued = item.map { enqueue($0, external: false) } ?? .queued
        return (handle.isTask ? Followup() : workEnded(id: handle.id), enqueued)
    }

    /// Teardown is about to cancel these: every effect whose work may still be under way.
    @inlinable
    func effectsToCancel() -> [RunningEffect] {
        effects.values
    }

    /// The effects still running, in start order, but `except` (the caller's own effect).
    @inlinable
    func unfinishedEffects(except: UInt64?) -> [EffectIdentity] {
        effects.values.lazy
            .filter { $0.handle.id != except }
            .map { EffectIdentity(effect: $0.handle.id, feedback: $0.handle.feedback) }
            .sorted { $0.effect < $1.effect }
    }

    @inlinable
    mutating func countDiscardedAtStop(_ count: Int) {
        statistics.eventsDiscardedAtStop += count
    }

    /// An event for a child feature that no longer exists (see `EffectDoor`).
    @inlinable
    mutating func countOrphaned() {
        statistics.eventsOrphaned += 1
    }
}
