// The drain role's transitions: a batch or an in-place event ends, the state is published, the
// role is kept or released.

extension LoopStateMachine {
    @usableFromInline
    enum BatchAction {
        /// `batch` now holds the next items to handle.
        case next
        /// The queue was empty; the drain role is released. Resume these idle waiters.
        case done([CheckedContinuation<Void, Never>])
        /// The queue was empty and the holder asked to keep the drain role.
        case emptyHeld
        /// The holder asked to pause (its budget for this turn is spent): the state is published,
        /// the role is still held, and the queued items wait for the holder's next pass.
        case paused
        /// `stop()` began while draining: the holder must tear the loop down.
        case tearDown
    }

    /// The drain-role holder finished a batch. Publishes the state and takes the next batch, or
    /// releases the role. `retired` receives the state that was published before, to be released
    /// after the lock.
    @inlinable
    mutating func finishBatch(
        _ batch: inout [QueueItem<State, Event>],
        state: State,
        reduced: Int,
        droppedFromCancelledEffects: Int,
        releaseWhenEmpty: Bool,
        pause: Bool = false,
        retired: inout State?
    ) -> BatchAction {
        precondition(draining, "LoopStateMachine.finishBatch: the drain role is not held (phase \(phase))")
        retired = publish(state, reduced: reduced, droppedFromCancelledEffects: droppedFromCancelledEffects)
        guard phase == .running else { return .tearDown }
        if items.isEmpty && parked.isEmpty {
            shrinkQueue()
            guard releaseWhenEmpty else { return .emptyHeld }
            draining = false
            return .done(takeIdleWaitersIfIdle())
        }
        if pause { return .paused }
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

    @usableFromInline
    enum InPlaceEnd {
        /// The queue was empty: the drain role is released.
        case released
        /// Released, and these waiters may go: the loop became idle, or tests wait for progress.
        case releasedWaking([CheckedContinuation<Void, Never>])
        /// Items arrived meanwhile: the role is still held, to drain them.
        case more
        /// `stop()` began: the holder must tear the loop down.
        case tearDown
    }

    /// The holder reduced the one event it took the role with (``send(_:from:)``): publishes the
    /// state and, when nothing arrived meanwhile, releases the role — one lock for the whole
    /// send. `retired` receives the state published before, to be released after the lock.
    @inlinable
    mutating func finishInPlace(
        state: State,
        reduced: Int,
        droppedFromCancelledEffects: Int,
        retired: inout State?
    ) -> InPlaceEnd {
        precondition(draining, "LoopStateMachine.finishInPlace: the drain role is not held (phase \(phase))")
        retired = publish(state, reduced: reduced, droppedFromCancelledEffects: droppedFromCancelledEffects)
        guard phase == .running else { return .tearDown }
        guard items.isEmpty && parked.isEmpty else { return .more }
        draining = false
        if progressWaiters.isEmpty && idleWaiters.isEmpty { return .released }
        return .releasedWaking(takeIdleWaitersIfIdle())
    }

    /// Queue buffers keep their capacity from batch to batch, so that a steady flow allocates
    /// nothing; but not the peak of a burst: an empty buffer above this many items is given back
    /// (2,000,000 back-to-back sends otherwise left an idle loop holding ~144 MiB for life).
    @inlinable
    static var keptQueueCapacity: Int { 1_024 }

    /// The queue is empty: buffers a burst grew far past what the loop needs go. They are empty,
    /// so freeing them under the lock runs no user code.
    @inlinable
    mutating func shrinkQueue() {
        if items.capacity > Self.keptQueueCapacity { items = [] }
        if parked.capacity > Self.keptQueueCapacity { parked = [] }
    }

    /// Makes `state` and the drain's counts visible to `Loop.state` and `Loop.statistics`.
    /// Returns the state published before, which the caller releases after the lock: it may hold
    /// the last reference to something whose `deinit` touches the loop.
    @inlinable
    mutating func publish(_ state: State, reduced: Int, droppedFromCancelledEffects: Int) -> State {
        let retired = published
        published = state
        statistics.eventsReduced &+= reduced
        statistics.eventsDroppedFromCancelledEffects &+= droppedFromCancelledEffects
        return retired
    }

    @inlinable
    var isIdle: Bool {
        phase == .stopped || (phase == .running && !draining && items.isEmpty && effects.isEmpty && parked.isEmpty)
    }

    /// The waiters to resume now that the loop has made progress (a drain ended, an effect's
    /// work ended, teardown finished): the idle waiters if the loop is idle, and every progress
    /// waiter (tests that wait for a condition of their own).
    @inlinable
    mutating func takeIdleWaitersIfIdle() -> [CheckedContinuation<Void, Never>] {
        var ready: [CheckedContinuation<Void, Never>] = []
        if !progressWaiters.isEmpty {
            swap(&ready, &progressWaiters)
        }
        if !idleWaiters.isEmpty && isIdle {
            ready += idleWaiters
            idleWaiters = []
        }
        return ready
    }
}
