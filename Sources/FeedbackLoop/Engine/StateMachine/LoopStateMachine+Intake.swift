// Intake: what may join the queue, and who then holds the drain role.

extension LoopStateMachine {
    @usableFromInline
    enum EnqueueAction {
        /// Queued behind the current drain.
        case queued
        /// The loop was idle: the caller now holds the drain role and handles the item first.
        case drain(QueueItem<State, Event>)
        /// Not queued; counted. `firstWarning` is true the first time for this reason.
        case dropped(DropReason, firstWarning: Bool)
    }

    /// Whether a new queue item may go in, and how.
    @usableFromInline
    enum Admission {
        /// The loop was idle: the caller now holds the drain role.
        case takeRole
        /// Queue it behind the current drain.
        case append
        case dropped(DropReason, firstWarning: Bool)
    }

    /// Admits one item: refused after stop, or from outside (`external`) past the capacity; taken
    /// by the caller when the loop is idle; queued otherwise (counted against the capacity if
    /// external). The caller appends it on `.append`.
    @inlinable
    mutating func admit(external: Bool) -> Admission {
        switch phase.admit() {
        case .takeRole:
            return .takeRole
        case .refuse:
            statistics.eventsDroppedAfterStop += 1
            defer { warnedAfterStop = true }
            return .dropped(.afterStop, firstWarning: !warnedAfterStop)
        case .queue:
            break
        }
        if external {
            if externalQueued >= capacity {
                statistics.eventsDroppedOverCapacity += 1
                defer { warnedOverCapacity = true }
                return .dropped(.overCapacity, firstWarning: !warnedOverCapacity)
            }
            externalQueued += 1
        }
        return .append
    }

    @inlinable
    mutating func enqueue(_ item: QueueItem<State, Event>, external: Bool) -> EnqueueAction {
        switch admit(external: external) {
        case .takeRole:
            return .drain(item)
        case .append:
            items.append(item)
            return .queued
        case .dropped(let reason, let firstWarning):
            return .dropped(reason, firstWarning: firstWarning)
        }
    }

    @usableFromInline
    enum SendAction {
        /// The loop was idle: the caller now holds the drain role with the event in hand, not
        /// queued, and reduces it first.
        case reduce
        /// Queued behind the current drain.
        case queued
        /// Not queued; counted. `firstWarning` is true the first time for this reason.
        case dropped(DropReason, firstWarning: Bool)
    }

    /// An event from ``Loop/send(_:)`` (no handle, counted against the capacity) or from an
    /// effect (never refused for capacity, but dropped if its effect was cancelled or has already
    /// ended: a sink used after ``Sink/finish()``, or kept after its `.run` body returned). A
    /// sender that finds the loop idle keeps its event rather than wrapping it in a queue item
    /// only to take it out again.
    ///
    /// An effect's event is dropped at one of two moments, each decided and counted in one
    /// place: here, when it is sent (a finished effect's late last word comes here too), and when
    /// it is reduced (``StateOwner/receive(_:from:engine:)``: its effect was cancelled since, or
    /// its child feature has gone), counted by the owner and published with the batch.
    ///
    /// Always inlined: it is every send's one transition, and left to the optimiser's budget it
    /// was sometimes outlined behind a call (W1 on `callback` measures it).
    @inlinable
    @inline(__always)
    mutating func send(_ event: Event, from handle: EffectHandle?) -> SendAction {
        if let handle, !handle.isRunning {
            statistics.eventsDroppedFromCancelledEffects += 1
            return .dropped(.fromCancelledEffect, firstWarning: false)
        }
        switch admit(external: handle == nil) {
        case .takeRole:
            return .reduce
        case .append:
            items.append(.event(event, handle))
            return .queued
        case .dropped(let reason, let firstWarning):
            return .dropped(reason, firstWarning: firstWarning)
        }
    }

    /// ``send(_:from:)`` for a loop that propagates `ServiceContext`: the same rules, for an item
    /// that carries the event with its context.
    @inlinable
    mutating func send(_ item: QueueItem<State, Event>, from handle: EffectHandle?) -> EnqueueAction {
        if let handle, !handle.isRunning {
            statistics.eventsDroppedFromCancelledEffects += 1
            return .dropped(.fromCancelledEffect, firstWarning: false)
        }
        return enqueue(item, external: handle == nil)
    }

    @usableFromInline
    enum SubmitAction {
        case queued
        case drain(QueueItem<State, Event>)
        case parked
        /// Refused, and counted in `eventsDroppedAfterStop`: the loop had stopped.
        case stopped
    }

    @inlinable
    mutating func submit(
        _ event: Event, id: UInt64, reply: UnsafeContinuation<State, any Error>, cause: EventCause<State>? = nil
    ) -> SubmitAction {
        guard phase.isRunning else {
            statistics.eventsDroppedAfterStop += 1
            return .stopped
        }
        if externalQueued >= capacity || !parked.isEmpty {
            let parkedSubmit = ParkedSubmit(id: id, event: event, reply: reply, cause: cause)
            parked.append(parkedSubmit)
            return .parked
        }
        switch enqueue(cause.map { .traced(event, $0) } ?? .submit(event, reply), external: true) {
        case .queued: return .queued
        case .drain(let item): return .drain(item)
        case .dropped(let reason, _):
            preconditionFailure("LoopStateMachine.submit: an admitted submit was dropped (\(reason)) in phase \(phase)")
        }
    }

    /// Takes a parked submit out of line because its task was cancelled, and counts its event
    /// dropped (``DropReason/cancelledWhileWaiting``): the one place that decides this drop.
    /// `nil` if it is no longer parked (room came and it joined the queue, or stop discarded it).
    @inlinable
    mutating func unpark(id: UInt64) -> ParkedSubmit<State, Event>? {
        guard let index = parked.firstIndex(where: { $0.id == id }) else { return nil }
        statistics.eventsCancelledWhileWaiting += 1
        return parked.remove(at: index)
    }

    @usableFromInline
    enum ObserveAction {
        case enqueued(id: Int, EnqueueAction)
        /// The loop has stopped: the observer gets the final state and its stop at once.
        case stopped(State)
        /// A stop is under way: the observer gets the final state and its stop after teardown.
        case awaitingTeardown
    }

    @inlinable
    mutating func addObserver(
        onState: @escaping @Sendable (State) -> Void,
        onStop: (@Sendable () -> Void)?
    ) -> ObserveAction {
        let id = nextObserverID
        nextObserverID += 1
        let entry = ObserverEntry(id: id, onState: onState, onStop: onStop)
        switch phase {
        case .idle, .draining:
            return .enqueued(id: id, enqueue(.addObserver(entry), external: false))
        case .stopping:
            observersAwaitingTeardown.append(entry)
            return .awaitingTeardown
        case .tornDown, .stopped:
            return .stopped(published)
        }
    }

    /// An observer leaves through the queue, in order with the states it sees. After stop,
    /// observers are already gone: nothing to queue.
    @inlinable
    mutating func removeObserver(_ id: Int) -> EnqueueAction {
        guard phase.isRunning else { return .queued }
        return enqueue(.removeObserver(id), external: false)
    }
}
