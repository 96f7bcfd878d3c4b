/// What readers of ``Loop/state`` and ``Loop/statistics`` see: the state the drain last
/// published and the loop's counts. One of the sub-machines ``LoopStateMachine`` composes,
/// guarded by the loop's lock.
///
/// Each count changes in one transition, the one that names what it counts. Its fields change
/// only through the transitions below (their setters are private to this file).
@usableFromInline
struct Publication<State: Sendable>: Sendable {
    @usableFromInline private(set) var published: State
    /// `effectsRunning` stays 0 here: it is read off the running effects when asked for.
    @usableFromInline private(set) var statistics = LoopStatistics()

    @inlinable
    init(initial: State) {
        self.published = initial
    }

    /// Makes `state` and the drain's counts visible. Returns the state published before, which
    /// the caller releases after the lock: it may hold the last reference to something whose
    /// `deinit` touches the loop.
    @inlinable
    mutating func publish(_ state: State, reduced: Int, droppedFromCancelledEffects: Int) -> State {
        let retired = published
        published = state
        statistics.eventsReduced &+= reduced
        statistics.eventsDroppedFromCancelledEffects &+= droppedFromCancelledEffects
        return retired
    }

    /// An event refused or dropped for `reason`, `count` of them.
    @inlinable
    mutating func countDropped(_ reason: DropReason, _ count: Int = 1) {
        switch reason {
        case .afterStop: statistics.eventsDroppedAfterStop += count
        case .overCapacity: statistics.eventsDroppedOverCapacity += count
        case .fromCancelledEffect: statistics.eventsDroppedFromCancelledEffects += count
        case .discardedAtStop: statistics.eventsDiscardedAtStop += count
        case .cancelledWhileWaiting: statistics.eventsCancelledWhileWaiting += count
        }
    }

    /// An event for a child feature that no longer exists (see `EffectDoor`).
    @inlinable
    mutating func countOrphaned() {
        statistics.eventsOrphaned += 1
    }

    @inlinable
    mutating func countStarted() {
        statistics.effectsStarted += 1
    }

    /// A `.send` effect: started and finished at once.
    @inlinable
    mutating func countSendEffect() {
        statistics.effectsStarted += 1
        statistics.effectsFinished += 1
    }

    /// How an effect came out: `.finished` or `.failed` when it ended by itself, `.cancelled`
    /// when the loop cancelled it.
    @inlinable
    mutating func count(_ outcome: EffectLifecycleEvent.Kind) {
        switch outcome {
        case .finished: statistics.effectsFinished += 1
        case .failed: statistics.effectsFailed += 1
        case .cancelled: statistics.effectsCancelled += 1
        case .started: preconditionFailure("Publication.count(_:) with .started: a start is not an outcome")
        }
    }

    /// Teardown cancelled `count` effects.
    @inlinable
    mutating func countCancelled(_ count: Int) {
        statistics.effectsCancelled += count
    }
}
