import Logging
import Synchronization

// Stop and waiting: the stop transition, teardown where the state's owner lives, and every way a
// caller waits for the loop (stopped, idle, a stop with a bound, a test's condition).

extension LoopEngine {
    /// Begins stopping without waiting: no event is reduced from now on, queued ones are
    /// discarded, and every effect is cancelled once the drain role is free.
    @inlinable
    func beginStop() {
        driver.stopBegan(self, tearDown: beginStopTakingTeardown())
    }

    /// ``beginStop()`` for a caller that will wait for the stop anyway (``Loop/stop()``): when the
    /// loop was idle, the caller's own task tears down — on the actor backend by hopping to the
    /// actor — instead of a new task, and the wait that follows finds the loop stopped.
    @inlinable
    func beginStopInCaller() async {
        await driver.stopBeganInCaller(self, tearDown: beginStopTakingTeardown())
    }

    /// Stop's transition and its reports; `true` if the caller now holds the drain role and must
    /// tear down.
    @inlinable
    func beginStopTakingTeardown() -> Bool {
        stopRequested.store(true, ordering: .relaxed)
        let action = lock.withLock { $0.beginStop() }
        switch action {
        case .alreadyStopping:
            return false
        case .drainerTearsDown(let discarded, let parked), .tearDown(let discarded, let parked):
            reportDiscarded(discarded)
            reportDiscarded(parked.lazy.map(\.item))
        }
        if case .tearDown = action { return true }
        return false
    }

    /// Finishes observers, releases feedbacks and cancels every running effect exactly once.
    @inlinable
    func tearDown(_ owner: StateOwner<State, Event>) {
        owner.endObserversAndFeedbacks()
        var running = lock.withLock { $0.effectsToCancel() }
        var cancelled = 0
        var endedNow: [UInt64] = []
        for effect in running {
            guard effect.handle.markCancelled() else {
                // Finished with `finish(sending:)` but its task is still in its cleanup: the loop
                // is stopping, so that task is cancelled too (not counted: the effect finished).
                if effect.handle.isTask { effect.stopper.stop() }
                continue
            }
            cancelled += 1
            effect.stopper.stop()
            if !effect.handle.isTask { endedNow.append(effect.handle.id) }
            instrumentation?.hooks.onEffect?(
                EffectLifecycleEvent(effect: effect.handle.id, feedback: effect.handle.feedback, kind: .cancelled))
        }
        running = []  // before the lock: these may be the last references
        var followup = lock.withLock { $0.tornDown(cancelled: cancelled, endedNow: endedNow) }
        followup.perform()
    }

    /// The effect of this loop the calling task runs in, if any (see ``EffectMarker``).
    @usableFromInline
    var callingEffect: UInt64? {
        guard let marker = EffectMarker.current, marker.loop == ObjectIdentifier(self) else { return nil }
        return marker.effect
    }

    /// Hosts the loop in the calling task, for ``Loop/run()``, if its backend keeps a task tree
    /// and waits for a host (``LoopHosting/run``); returns once it no longer needs the task.
    @inlinable
    func hostForRun() async {
        await driver.host(self, forRun: configuration.hosting)
    }

    /// Returns once the loop has stopped and every effect has ended — every effect but the
    /// calling one, when called from inside one of this loop's effects (it would otherwise wait
    /// for itself).
    @inlinable
    func waitUntilStopped() async {
        let except = callingEffect
        let id = nextID()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let action = lock.withLock { $0.waitForStop(StopWaiter(id: id, except: except, continuation: continuation)) }
            if case .resume = action { continuation.resume() }
        }
    }

    /// Like ``waitUntilStopped()``, but gives up when the calling task is cancelled.
    @inlinable
    func waitUntilStoppedOrCancelled() async {
        let except = callingEffect
        let id = nextID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let action = lock.withLock { $0.waitForStop(StopWaiter(id: id, except: except, continuation: continuation)) }
                switch action {
                case .resume:
                    continuation.resume()
                case .wait:
                    // Cancelled before the handler could see the waiter: take it out here.
                    if Task.isCancelled, let waiter = lock.withLock({ $0.cancelStopWait(id: id) }) {
                        waiter.continuation.resume()
                    }
                }
            }
        } onCancel: {
            lock.withLock { $0.cancelStopWait(id: id) }?.continuation.resume()
        }
    }

    /// Stops, waiting at most `timeout` for the effects to end; reports those still running then.
    @inlinable
    func stop<C: Clock>(timeout: Duration, clock: C) async -> StopReport where C.Duration == Duration {
        beginStop()
        let stoppedInTime = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await self.waitUntilStoppedOrCancelled()
                return true
            }
            group.addTask {
                // Throws when cancelled: the stop finished first.
                try? await clock.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        if stoppedInTime { return StopReport(unfinishedEffects: []) }
        let except = callingEffect
        return StopReport(unfinishedEffects: lock.withLock { $0.unfinishedEffects(except: except) })
    }

    @inlinable
    func waitUntilIdle() async {
        if let effect = callingEffect {
            // The loop cannot become idle while the caller, one of its effects, is running.
            configuration.logger.error(
                "waitUntilIdle() called from inside one of the loop's own effects would wait for itself; it returns at once",
                metadata: ["loop": "\(configuration.label)", "effect": "\(effect)"])
            return
        }
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let idle = lock.withLock { $0.waitForIdle(waiter) }
            if idle { waiter.resume() }
        }
    }

}
