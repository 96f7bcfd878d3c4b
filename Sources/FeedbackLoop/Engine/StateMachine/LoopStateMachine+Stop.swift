// Stop, teardown and the callers that wait for idle or for stop.

extension LoopStateMachine {
    /// Observers whose joining `items` held when stop discarded them wait for teardown with those
    /// that joined during the stop, so that they too get the final state and their stop: a
    /// `states` reader subscribed just before `stop()` would otherwise wait forever. One that
    /// asked to leave in the same items leaves. The caller holds `items` until after the lock, so
    /// an entry taken out here is never the last reference to an observer's closures.
    @inlinable
    mutating func setAsideObservers(of items: some Sequence<QueueItem<State, Event>>) {
        for item in items {
            switch item {
            case .addObserver(let entry):
                observersAwaitingTeardown.append(entry)
            case .removeObserver(let id):
                observersAwaitingTeardown.removeAll { $0.id == id }
            case .event, .submit, .traced, .start:
                break
            }
        }
    }

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
        let begun = phase.beginStop()
        if case .alreadyStopping = begun { return .alreadyStopping }
        let discarded = items
        let parked = self.parked
        items = []
        self.parked = []
        externalQueued = 0
        statistics.eventsDiscardedAtStop += discarded.count { $0.isEvent } + parked.count
        setAsideObservers(of: discarded)
        if case .drainerTearsDown = begun {
            return .drainerTearsDown(discarded: discarded, parked: parked)
        }
        return .tearDown(discarded: discarded, parked: parked)
    }

    /// Teardown cancelled every effect: `cancelled` of them were still running; the callback
    /// effects among them (`endedNow`) ended with their cancellation.
    @inlinable
    mutating func tornDown(cancelled: Int, endedNow: [UInt64]) -> Followup {
        phase.tornDown()
        statistics.effectsCancelled += cancelled
        var followup = Followup()
        for id in endedNow {
            if let entry = removeEffect(id) { followup.releasedAtTeardown.append(entry) }
        }
        if !observersAwaitingTeardown.isEmpty {
            followup.lateObservers = observersAwaitingTeardown
            followup.finalState = published
            observersAwaitingTeardown = []
        }
        wakeWaiters(&followup)
        return followup
    }

    @usableFromInline
    enum StopWaitAction {
        /// Stopped already (or only the calling effect is left): go on at once.
        case resume
        case wait
    }

    /// A caller of `stop()`/`run()` waits for every effect to end, except the one it runs in.
    @inlinable
    mutating func waitForStop(_ waiter: StopWaiter) -> StopWaitAction {
        if phase == .stopped { return .resume }
        if phase == .tornDown, let except = waiter.except, effects.count == 1, effects[except] != nil {
            return .resume
        }
        stopWaiters.append(waiter)
        return .wait
    }

    /// A stop waiter gave up (its bound passed): it leaves the list, if still there.
    @inlinable
    mutating func cancelStopWait(id: UInt64) -> StopWaiter? {
        guard let index = stopWaiters.firstIndex(where: { $0.id == id }) else { return nil }
        return stopWaiters.remove(at: index)
    }

    /// `true` if the loop is idle now; otherwise `waiter` is resumed when it becomes idle.
    @inlinable
    mutating func waitForIdle(_ waiter: CheckedContinuation<Void, Never>) -> Bool {
        if isIdle { return true }
        waiters.append(Waiter(waiter, untilIdle: true))
        return false
    }
}
