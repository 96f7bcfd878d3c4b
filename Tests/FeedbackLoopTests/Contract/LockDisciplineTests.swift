import FeedbackLoop
import Testing

/// Rule 9: no user code runs while the loop's lock is held — not a callback, not a continuation
/// resume, and not a `deinit`. Everything whose release can run user code (cancellations, effect
/// closures and tasks, replaced published states, observers, queued and parked events) is released
/// after the lock. Each path is tried with a tripwire whose `deinit` touches the loop, once with
/// the loop held elsewhere and once with the tripwire's owner holding the loop's last reference
/// (its release then runs `Loop.deinit`, which stops the loop and takes the lock).
@Suite("9. No user code runs under the loop's lock")
struct LockDisciplineTests {
    /// A loop whose `.skippingRepeated` effect is made by `effect`; the test keeps no reference.
    private func makeLoop(
        _ backend: Backend,
        owning: Bool,
        box: LoopBox,
        initial: Wired.State = Wired.State(query: 1),
        effect: @escaping @Sendable (Int) -> Effect<Wired.Event>
    ) -> Loop<Wired.State, Wired.Event> {
        let loop = Loop(
            initial: initial,
            reduce: Wired.reduce,
            feedbacks: [.skippingRepeated({ $0.query }, effects: effect)],
            backend: backend)
        box.hold(loop, owning: owning)
        return loop
    }

    @Test(arguments: Backend.allCases, [false, true])
    func aCallbackEffectThatFinishesOnAnotherThreadReleasesItsCancellationAfterTheLock(backend: Backend, owning: Bool) async throws {
        let box = LoopBox()
        let sink = Locked<Sink<Wired.Event>?>(nil)
        var loop: Loop<Wired.State, Wired.Event>? = makeLoop(backend, owning: owning, box: box) { _ in
            .callback { effectSink in
                sink.withLock { $0 = effectSink }
                let wire = box.tripwire()
                return Cancellation { _ = wire }  // the cancellation holds the wire's last reference
            }
        }
        try await waitUntil("the effect to start") { sink.current != nil }
        if owning { loop = nil }  // from now on the cancellation's wire holds the loop's last reference
        await onThreads(1) { _ in sink.withLock { $0.take() }?.finish() }
        try await withDeadline("the released cancellation's deinit") { await box.touches.wait(for: 1) }
        await loop?.stop()
    }

    @Test(arguments: Backend.allCases, [false, true])
    func aRunEffectThatReturnsReleasesItsTaskAfterTheLock(backend: Backend, owning: Bool) async throws {
        let box = LoopBox()
        let go = Gate()
        var loop: Loop<Wired.State, Wired.Event>? = makeLoop(backend, owning: owning, box: box) { _ in
            let wire = box.tripwire()
            return .run { _ in
                await go.wait()
                _ = wire
            }
        }
        if owning { loop = nil }  // from now on the task's wire holds the loop's last reference
        go.open()
        try await withDeadline("the finished task's deinit") { await box.touches.wait(for: 1) }
        await loop?.stop()
    }

    @Test(arguments: Backend.allCases, [false, true])
    func aCancelledEffectIsReleasedAfterTheLock(backend: Backend, owning: Bool) async throws {
        let box = LoopBox()
        let loop = makeLoop(backend, owning: owning, box: box) { query in
            guard query == 1 else { return .none }
            let wire = box.tripwire()
            return .callback { _ in Cancellation { _ = wire } }
        }
        loop.send(.setQuery(2))  // cancels the effect of query 1
        try await withDeadline("the cancelled effect's deinit") { await box.touches.wait(for: 1) }
        await loop.stop()
    }

    @Test(arguments: Backend.allCases, [false, true])
    func aReplacedPublishedStateIsReleasedAfterTheLock(backend: Backend, owning: Bool) async throws {
        let box = LoopBox()
        var loop: Loop<Wired.State, Wired.Event>? = makeLoop(backend, owning: owning, box: box, initial: Wired.State()) { _ in .none }
        loop?.send(.hold(box.tripwire()))
        await loop?.barrier()  // the state holding the wire is published
        let last = loop
        if owning { loop = nil }
        last?.send(.hold(nil))  // publishing the next state releases the wire
        _ = consume last
        try await withDeadline("the replaced state's deinit") { await box.touches.wait(for: 1) }
        await loop?.stop()
    }

    @Test(arguments: Backend.allCases, [false, true])
    func stopReleasesEveryEffectAfterTheLock(backend: Backend, owning: Bool) async throws {
        let box = LoopBox()
        let started = CountdownLatch()
        let loop = Loop(
            initial: Wired.State(),
            reduce: Wired.reduce,
            feedbacks: [
                .requests({ _ in [1, 2] }) { _ in
                    let wire = box.tripwire()
                    return .callback { _ in
                        started.increment()
                        return Cancellation { _ = wire }
                    }
                },
                .requests({ _ in [1, 2] }) { _ in
                    let wire = box.tripwire()
                    return .run { _ in
                        started.increment()
                        _ = wire
                        await suspendUntilCancelled()
                    }
                },
            ],
            backend: backend)
        box.hold(loop, owning: owning)
        try await withDeadline("4 effects to start") { await started.wait(for: 4) }
        try await withDeadline("stop") { await loop.stop() }
        try await withDeadline("every effect's deinit") { await box.touches.wait(for: 4) }
    }

    @Test(arguments: Backend.allCases)
    func aRemovedObserverIsReleasedAfterTheLock(backend: Backend) async throws {
        let box = LoopBox()
        let loop = Loop(initial: Wired.State(), reduce: Wired.reduce, backend: backend)
        box.hold(loop, owning: false)
        do {
            let wire = box.tripwire()
            let observation = loop.observe { _ in _ = wire }
            await loop.barrier()
            observation.cancel()
        }
        try await withDeadline("the observer's deinit") { await box.touches.wait(for: 1) }
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func eventsDiscardedAtStopAreReleasedAfterTheLock(backend: Backend) async throws {
        let box = LoopBox()
        let loop = Loop(initial: Wired.State(), reduce: Wired.reduce, backend: backend)
        box.hold(loop, owning: false)
        try await withDrainHeld(loop, by: .increment, at: { $0.count == 1 }) { release in
            loop.send(.hold(box.tripwire()))
            loop.send(.hold(box.tripwire()))
            let stopped = Task { await loop.stop() }
            try await waitUntil("stop to discard the queued events") { loop.statistics.eventsDiscardedAtStop == 2 }
            release.open()
            try await withDeadline("stop") { await stopped.value }
        }
        try await withDeadline("the discarded events' deinits") { await box.touches.wait(for: 2) }
    }

    @Test(arguments: Backend.allCases)
    func aParkedSendAndWaitThatIsCancelledIsReleasedAfterTheLock(backend: Backend) async throws {
        let box = LoopBox()
        let loop = Loop(
            initial: Wired.State(), reduce: Wired.reduce, backend: backend,
            configuration: LoopConfiguration(capacity: .bounded(1)))
        box.hold(loop, owning: false)
        try await withDrainHeld(loop, by: .increment, at: { $0.count == 1 }) { release in
            loop.send(.increment)  // fills the queue
            let parked = Task { try await loop.sendAndWait(.hold(box.tripwire())) }
            parked.cancel()
            await #expect(throws: LoopError.cancelled) { try await parked.value }
            try await withDeadline("the parked event's deinit") { await box.touches.wait(for: 1) }
        }
        await loop.stop()
    }
}
