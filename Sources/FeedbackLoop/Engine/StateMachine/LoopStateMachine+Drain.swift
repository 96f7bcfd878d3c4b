// The drain role's transitions: a batch or an in-place event ends, the state is published, the
// role is kept or released.

extension LoopStateMachine {
    /// What the drain role's holder does once one of its transitions (``finishBatch`` or
    /// ``finishInPlace``) has published the state.
    @usableFromInline
    enum DrainAction {
        /// Items are queued: `batch` now holds them (``finishBatch``), or the holder, which
        /// reduced one event in place, drains them (``finishInPlace``).
        case drainMore
        /// The queue was empty: the drain role is released.
        case released
        /// Released, and these waiters may go: the loop became idle, or a test waits for progress.
        case releasedWaking([CheckedContinuation<Void, Never>])
        /// The queue was empty and, as the holder asked, it keeps the role for a second look.
        case keepRole
        /// The holder's budget for this turn is spent: it keeps the role, and the queued items
        /// wait for its next pass.
        case pause
        /// `stop()` began: the holder must tear the loop down.
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
    ) -> DrainAction {
        let goesOn = phase.drainGoesOn("finishBatch")
        retired = publish(state, reduced: reduced, droppedFromCancelledEffects: droppedFromCancelledEffects)
        guard goesOn else { return .tearDown }
        if items.isEmpty && parked.isEmpty {
            shrinkQueue()
            guard releaseWhenEmpty else { return .keepRole }
            return release()
        }
        if pause { return .pause }
        swap(&items, &batch)
        externalQueued = 0
        if !parked.isEmpty { moveParked(into: &batch) }
        return .drainMore
    }

    /// Room has appeared: parked submits join `batch`, oldest first, up to the capacity. Any
    /// submit that arrives from now on queues behind them. Out of line: only a full bounded queue
    /// parks submits, and inlined this loop kept the lock's closure in ``finishBatch`` from being
    /// inlined into every drain pass (W2, the ping-pong workload, measures it).
    @inlinable
    @inline(never)
    mutating func moveParked(into batch: inout [QueueItem<State, Event>]) {
        var moved = 0
        while !parked.isEmpty && moved < capacity {
            let next = parked.removeFirst()
            batch.append(next.item)
            moved += 1
        }
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
    ) -> DrainAction {
        let goesOn = phase.drainGoesOn("finishInPlace")
        retired = publish(state, reduced: reduced, droppedFromCancelledEffects: droppedFromCancelledEffects)
        guard goesOn else { return .tearDown }
        guard items.isEmpty && parked.isEmpty else { return .drainMore }
        return release()
    }

    /// The queue is empty: the holder gives the drain role up, and whoever waited for the loop
    /// to be idle (or for its progress) may go. Checks for waiters before taking any, so that a
    /// loop nobody waits for builds no array on its way to idle.
    @inlinable
    @inline(__always)
    mutating func release() -> DrainAction {
        phase.release()
        if waiters.isEmpty { return .released }
        return .releasedWaking(takeReadyWaiters())
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
        phase == .stopped || (phase == .idle && items.isEmpty && effects.isEmpty && parked.isEmpty)
    }

    /// The waiters to resume now that the loop has made progress (a drain ended, an effect's
    /// work ended, teardown finished): those waiting for idle if the loop is idle, and every one
    /// waiting for progress.
    @inlinable
    mutating func takeReadyWaiters() -> [CheckedContinuation<Void, Never>] {
        guard !waiters.isEmpty else { return [] }
        let idle = isIdle
        var ready: [CheckedContinuation<Void, Never>] = []
        waiters.removeAll { waiter in
            guard idle || !waiter.untilIdle else { return false }
            ready.append(waiter.continuation)
            return true
        }
        return ready
    }
}
