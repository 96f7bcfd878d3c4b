/// Everything about a loop that more than one thread touches, guarded by the loop's one lock.
///
/// A state machine in the style of swift-nio: each mutating method is one transition and returns
/// what the caller must do *after* leaving the lock (drain, wake waiters, tear down), so nothing
/// is resumed or called back while the lock is held.
///
/// The drain role: `draining` is true while one thread (callback backend) or the actor (actor
/// backend) is handling queue items. Only the holder touches the machine (state, reducer,
/// feedbacks, observers). The role is taken by the sender that finds the loop idle and released
/// only by the holder, under the lock, when it finds the queue empty — so an item enqueued while
/// the holder finishes is always either seen by the holder or starts a new drain (no lost wake-up).
@usableFromInline
struct CoreState<State: Sendable, Event: Sendable>: Sendable {
    @usableFromInline
    enum Phase: Sendable, Equatable {
        case running
        /// `stop()` began. `tornDown` once effects were cancelled and observers finished.
        case stopping(tornDown: Bool)
        /// Torn down and every effect has ended.
        case stopped
    }

    @usableFromInline var items: [QueueItem<State, Event>] = []
    @usableFromInline var draining = false
    @usableFromInline var phase = Phase.running
    @usableFromInline var externalQueued = 0
    @usableFromInline let capacity: Int
    @usableFromInline var published: State
    @usableFromInline var statistics = LoopStatistics()
    @usableFromInline var effects: [UInt64: RunningEffect] = [:]
    @usableFromInline var parked: [ParkedSubmit<State, Event>] = []
    @usableFromInline var idleWaiters: [CheckedContinuation<Void, Never>] = []
    @usableFromInline var stopWaiters: [CheckedContinuation<Void, Never>] = []
    @usableFromInline var nextObserverID = 0
    @usableFromInline var warnedAfterStop = false
    @usableFromInline var warnedOverCapacity = false

    @inlinable
    init(initial: State, capacity: Int) {
        self.published = initial
        self.capacity = capacity
    }

    // MARK: Intake

    @usableFromInline
    enum EnqueueAction {
        /// Queued behind the current drain.
        case queued
        /// The loop was idle: the caller now holds the drain role and handles the item first.
        case drain(QueueItem<State, Event>)
        /// Not queued; counted. `firstWarning` is true the first time for this reason.
        case dropped(DropReason, firstWarning: Bool)
    }

    @inlinable
    mutating func enqueue(_ item: QueueItem<State, Event>, external: Bool) -> EnqueueAction {
        guard phase == .running else {
            statistics.eventsDroppedAfterStop += 1
            defer { warnedAfterStop = true }
            return .dropped(.afterStop, firstWarning: !warnedAfterStop)
        }
        guard draining else {
            draining = true
            return .drain(item)
        }
        if external {
            if externalQueued >= capacity {
                statistics.eventsDroppedOverCapacity += 1
                defer { warnedOverCapacity = true }
                return .dropped(.overCapacity, firstWarning: !warnedOverCapacity)
            }
            externalQueued += 1
        }
        items.append(item)
        return .queued
    }

    /// An item from an effect: dropped if its effect was cancelled, never refused for capacity.
    @inlinable
    mutating func enqueue(event: Event, from handle: EffectHandle) -> EnqueueAction {
        if handle.isCancelled {
            statistics.eventsDroppedFromCancelledEffects += 1
            return .dropped(.fromCancelledEffect, firstWarning: false)
        }
        return enqueue(.event(event, handle), external: false)
    }

    @usableFromInline
    enum SubmitAction {
        case queued
        case drain(QueueItem<State, Event>)
        case parked
        case stopped
    }

    @inlinable
    mutating func submit(_ event: Event, id: UInt64, reply: UnsafeContinuation<State, any Error>) -> SubmitAction {
        guard phase == .running else { return .stopped }
        if externalQueued >= capacity || !parked.isEmpty {
            parked.append(ParkedSubmit(id: id, event: event, reply: reply))
            return .parked
        }
        switch enqueue(.submit(event, reply), external: true) {
        case .queued: return .queued
        case .drain(let item): return .drain(item)
        case .dropped: return .stopped  // unreachable: phase and capacity were checked above
        }
    }

    /// Takes a parked submit out of line (its task was cancelled).
    @inlinable
    mutating func unpark(id: UInt64) -> ParkedSubmit<State, Event>? {
        guard let index = parked.firstIndex(where: { $0.id == id }) else { return nil }
        return parked.remove(at: index)
    }

    // MARK: Draining

    @usableFromInline
    enum BatchAction {
        /// `batch` now holds the next items to handle.
        case next
        /// The queue was empty; the drain role is released. Resume these idle waiters.
        case done([CheckedContinuation<Void, Never>])
        /// The queue was empty and the holder asked to keep the drain role.
        case emptyHeld
        /// `stop()` began while draining: the holder must tear the loop down.
        case tearDown
    }

    /// The drain-role holder finished a batch. Publishes the state and takes the next batch, or
    /// releases the role.
    @inlinable
    mutating func finishBatch(
        _ batch: inout [QueueItem<State, Event>],
        state: State,
        reduced: Int,
        droppedFromCancelledEffects: Int,
        releaseWhenEmpty: Bool
    ) -> BatchAction {
        publish(state, reduced: reduced, droppedFromCancelledEffects: droppedFromCancelledEffects)
        guard phase == .running else { return .tearDown }
        if items.isEmpty && parked.isEmpty {
            guard releaseWhenEmpty else { return .emptyHeld }
            draining = false
            return .done(takeIdleWaitersIfIdle())
        }
        swap(&items, &batch)
        externalQueued = 0
        // Room has appeared: parked submits join this batch, oldest first, up to the capacity.
        // Any submit that arrives from now on queues behind them.
        var moved = 0
        while !parked.isEmpty && moved < capacity {
            let next = parked.removeFirst()
            batch.append(.submit(next.event, next.reply))
            moved += 1
        }
        return .next
    }

    /// Makes `state` and the drain's counts visible to `Loop.state` and `Loop.statistics`.
    @inlinable
    mutating func publish(_ state: State, reduced: Int, droppedFromCancelledEffects: Int) {
        published = state
        statistics.eventsReduced &+= reduced
        statistics.eventsDroppedFromCancelledEffects &+= droppedFromCancelledEffects
    }

    @inlinable
    var isIdle: Bool {
        phase == .stopped || (phase == .running && !draining && items.isEmpty && effects.isEmpty && parked.isEmpty)
    }

    @inlinable
    mutating func takeIdleWaitersIfIdle() -> [CheckedContinuation<Void, Never>] {
        guard !idleWaiters.isEmpty, isIdle else { return [] }
        defer { idleWaiters = [] }
        return idleWaiters
    }

    // MARK: Effects

    /// A started effect joins the registry, unless it already ended on another thread.
    @inlinable
    mutating func register(_ effect: RunningEffect) {
        statistics.effectsStarted += 1
        if effect.handle.isRunning {
            effects[effect.handle.id] = effect
        }
    }

    @usableFromInline
    struct Wakeups {
        @usableFromInline var idle: [CheckedContinuation<Void, Never>] = []
        @usableFromInline var stopped: [CheckedContinuation<Void, Never>] = []
        @inlinable init() {}
        @inlinable func resume() {
            for waiter in idle { waiter.resume() }
            for waiter in stopped { waiter.resume() }
        }
    }

    /// An effect left the registry. `outcome` is `.finished` or `.failed` when it ended by itself,
    /// and `nil` when it had been cancelled (counted then) and its task has now returned, or a
    /// callback effect's cancellation has run.
    @inlinable
    mutating func effectEnded(id: UInt64, outcome: EffectLifecycleEvent.Kind?) -> Wakeups {
        switch outcome {
        case .finished?: statistics.effectsFinished += 1
        case .failed?: statistics.effectsFailed += 1
        case .cancelled?, .started?, nil: break
        }
        effects.removeValue(forKey: id)
        var wakeups = Wakeups()
        if effects.isEmpty {
            if phase == .stopping(tornDown: true) {
                phase = .stopped
                wakeups.stopped = stopWaiters
                stopWaiters = []
            }
            wakeups.idle = takeIdleWaitersIfIdle()
        }
        return wakeups
    }

    // MARK: Observers

    @usableFromInline
    enum ObserveAction {
        case enqueued(id: Int, EnqueueAction)
        /// The loop has stopped: the observer gets the final state and its stop at once.
        case stopped(State)
    }

    @inlinable
    mutating func addObserver(
        onState: @escaping @Sendable (State) -> Void,
        onStop: (@Sendable () -> Void)?
    ) -> ObserveAction {
        guard phase == .running else { return .stopped(published) }
        let id = nextObserverID
        nextObserverID += 1
        return .enqueued(id: id, enqueue(.addObserver(ObserverEntry(id: id, onState: onState, onStop: onStop)), external: false))
    }

    // MARK: Stopping

    @usableFromInline
    enum StopAction {
        /// The loop was idle: the caller holds the drain role and must tear down.
        case tearDown(discarded: [QueueItem<State, Event>], parked: [ParkedSubmit<State, Event>])
        /// A drain is under way and will tear down at the end of its batch.
        case drainerTearsDown(discarded: [QueueItem<State, Event>], parked: [ParkedSubmit<State, Event>])
        /// Stop had already begun.
        case alreadyStopping
    }

    @inlinable
    mutating func beginStop() -> StopAction {
        guard phase == .running else { return .alreadyStopping }
        phase = .stopping(tornDown: false)
        let discarded = items
        let parked = self.parked
        items = []
        self.parked = []
        externalQueued = 0
        statistics.eventsDiscardedAtStop += discarded.count { $0.isEvent } + parked.count
        if draining {
            return .drainerTearsDown(discarded: discarded, parked: parked)
        }
        draining = true
        return .tearDown(discarded: discarded, parked: parked)
    }

    /// Teardown cancelled every effect: `cancelled` of them were still running; the callback
    /// effects among them (`endedNow`) ended with their cancellation.
    @inlinable
    mutating func tornDown(cancelled: Int, endedNow: [UInt64]) -> Wakeups {
        statistics.effectsCancelled += cancelled
        for id in endedNow { effects.removeValue(forKey: id) }
        phase = .stopping(tornDown: true)
        var wakeups = Wakeups()
        if effects.isEmpty {
            phase = .stopped
            wakeups.stopped = stopWaiters
            stopWaiters = []
        }
        wakeups.idle = takeIdleWaitersIfIdle()
        return wakeups
    }
}

extension QueueItem {
    @inlinable
    var isEvent: Bool {
        switch self {
        case .event, .submit: true
        case .start, .addObserver, .removeObserver: false
        }
    }
}
