import Logging
import Synchronization

/// The engine behind a ``Loop``, shared by every backend: the queue and its drain role, the
/// registry of running effects, stop, idle and statistics. What differs between backends — where
/// and when the machine runs — is behind ``driver`` (see ``LoopDriver``).
///
/// Effects' sinks and tasks hold the core, never the ``Loop``, so releasing the last reference to
/// a loop runs its `deinit`, which stops the core and lets every effect go.
@usableFromInline
final class LoopCore<State: Sendable, Event: Sendable>: EventReceiver, Sendable {
    @usableFromInline let lock: InlineLock<CoreState<State, Event>>
    /// Set when stop begins, so that a drain under way stops reducing mid-batch. A hint read
    /// without the lock; the lock-protected phase is the authority.
    @usableFromInline let stopRequested: Atomic<Bool>
    @usableFromInline let ids: Atomic<UInt64>
    /// How many observers the machine holds: kept by the drain-role holder, read by tests that
    /// check an observer or a `states` subscriber really left.
    @usableFromInline let observerCount: Atomic<Int>
    @usableFromInline let configuration: LoopConfiguration
    /// `nil` for an uninstrumented loop, the common case: boxed, so that such a loop keeps one
    /// word for it rather than four optional closures (56 bytes more per idle loop).
    @usableFromInline let instrumentation: InstrumentationHooks<State, Event>?
    @usableFromInline let driver: Driver<State, Event>

    @inlinable
    init(
        initial: State,
        reduce: @escaping @Sendable (inout State, Event) -> Void,
        feedbacks: [Feedback<State, Event>],
        backend: Backend,
        configuration: LoopConfiguration,
        instrumentation: LoopInstrumentation<State, Event>?
    ) {
        // Every value is built before the first store, and the atomics are stored last: in the
        // other order Swift 6.3's release build of this init crashes the compiler ("Found outside
        // of lifetime use", a `drop_deinit` of `stopRequested` in CopyPropagation) once
        // `LoopConfiguration` is a single reference.
        let driver = Driver(
            backend, machine: Machine(initial: initial, reduce: reduce, feedbacks: feedbacks), configuration: configuration)
        self.lock = InlineLock(CoreState<State, Event>(initial: initial, capacity: configuration.capacity.limit))
        self.configuration = configuration
        self.instrumentation = instrumentation.map(InstrumentationHooks.init)
        self.driver = driver
        self.stopRequested = Atomic(false)
        self.ids = Atomic(0)
        self.observerCount = Atomic(0)
    }

    @inlinable
    func nextID() -> UInt64 {
        ids.wrappingAdd(1, ordering: .relaxed).newValue
    }

    // MARK: Intake

    /// Lets the feedbacks see the initial state. Called once, right after init.
    @inlinable
    func start() {
        driver.start(self, hosting: configuration.hosting)
        let action = lock.withLock { $0.enqueue(.start, external: false) }
        perform(action, event: nil)
    }

    @inlinable
    func receive(_ event: Event, from handle: EffectHandle?) {
        let action = lock.withLock { $0.send(event, from: handle) }
        switch action {
        case .reduce:
            driver.drain(self, event: event, from: handle)
        case .queued:
            return
        case .dropped(let reason, let firstWarning):
            reportDrop(event, reason: reason, firstWarning: firstWarning)
        }
    }

    @inlinable
    func perform(_ action: CoreState<State, Event>.EnqueueAction, event: Event?) {
        switch action {
        case .queued:
            return
        case .drain(let item):
            drain(startingWith: item)
        case .dropped(let reason, let firstWarning):
            reportDrop(event, reason: reason, firstWarning: firstWarning)
        }
    }

    @usableFromInline
    func reportDrop(_ event: Event?, reason: DropReason, firstWarning: Bool) {
        if let event { instrumentation?.hooks.onDrop?(event, reason) }
        guard firstWarning else { return }
        switch reason {
        case .afterStop:
            configuration.logger.warning(
                "event sent after the loop stopped was dropped; later ones are counted in statistics",
                metadata: ["loop": "\(configuration.label)"])
        case .overCapacity:
            configuration.logger.warning(
                "event queue full; events are being dropped and counted in statistics",
                metadata: ["loop": "\(configuration.label)", "capacity": "\(configuration.capacity.limit)"])
        case .fromCancelledEffect, .discardedAtStop:
            break
        }
    }

    // MARK: Draining

    /// The caller holds the drain role: run the machine, starting with `item`, where the backend
    /// runs it.
    @inlinable
    func drain(startingWith item: QueueItem<State, Event>) {
        driver.drain(self, startingWith: item)
    }

    /// Queue items a backend that shares its thread (the actor, the stream's host, on a pool of
    /// one thread per core) handles before it yields: ~50–100 µs of a light reducer, so that a
    /// yield (about a microsecond) costs the loop about 1 % while other tasks wait at most one turn.
    @inlinable
    static var turnBudget: Int { 1_024 }

    /// How a drain pass ended.
    @usableFromInline
    enum DrainEnd {
        /// The queue was empty and the role was released.
        case released
        /// The queue was empty and, as asked, the role is still held.
        case emptyHeld
        /// The pass handled its `budget` of items; the role is still held and items are queued.
        case paused
        /// Stop began; the loop is torn down.
        case tornDown
    }

    /// Whether an empty batch buffer is worth keeping for the next drain (see
    /// ``CoreState/keptQueueCapacity``).
    @inlinable
    static func keeps(_ buffer: [QueueItem<State, Event>]) -> Bool {
        buffer.capacity <= CoreState<State, Event>.keptQueueCapacity
    }

    /// The sender found the loop idle and holds the drain role with `event` in hand (the
    /// `callback` backend): reduces it here, with no queue item, then publishes the state and
    /// releases the role in one lock — or, if events arrived meanwhile, drains them too.
    @inlinable
    func reduceInPlace(_ machine: Machine<State, Event>, event: Event, from handle: EffectHandle?) {
        if stopRequested.load(ordering: .relaxed) {
            discard(CollectionOfOne(.event(event, handle)))
        } else {
            machine.receive(event, from: handle, core: self)
        }
        let counts = machine.takeCounts()
        var retired: State?
        let end = lock.withLock {
            $0.finishInPlace(
                state: machine.state, reduced: counts.reduced, droppedFromCancelledEffects: counts.dropped,
                retired: &retired)
        }
        retired = nil  // after the lock: see `drainPass`
        switch end {
        case .released:
            return
        case .releasedWaking(let waiters):
            for waiter in waiters { waiter.resume() }
        case .more:
            drainPass(machine, first: nil)
        case .tearDown:
            tearDown(machine)
        }
    }

    /// Handles `first`, then batch after batch until the queue is empty or stop begins. Runs in
    /// the drain role only, so it may touch `machine`. With `releaseWhenEmpty: false` the holder
    /// keeps the role when it finds the queue empty, to look again shortly (a second look, after
    /// a yield: a sender in flow refills the queue meanwhile, and one wake-up serves the burst) —
    /// unless the queue was empty from the start and the loop's last second look found nothing.
    /// That is a loop woken by one event at a time (a service's sessions), where a second look
    /// costs a second scheduling of the holder for nothing (the `service` scenario and workload
    /// measure it); events arriving during a pass, or a second look that pays, bring the second
    /// look back (see ``Machine/secondLookPays``). Once it has handled
    /// `budget` items it pauses at the end of the batch, keeping the role: a holder that shares
    /// its thread (the actor, on a pool of one thread per core) gives way to other work there.
    @inlinable
    @discardableResult
    func drainPass(
        _ machine: Machine<State, Event>,
        first: QueueItem<State, Event>?,
        releaseWhenEmpty: Bool = true,
        budget: Int = .max
    ) -> DrainEnd {
        var handled = 0
        if let first {
            // The initial state reaches every feedback even when the loop is stopped before its
            // first drain (a backend whose drain runs later than `Loop.init`: a stop that comes
            // first would otherwise leave the feedbacks without it); teardown then cancels what
            // they started.
            if case .start = first {
                machine.handle(first, core: self)
            } else if stopRequested.load(ordering: .relaxed) {
                discard(CollectionOfOne(first))
            } else {
                machine.handle(first, core: self)
            }
        }
        var batch = machine.spare
        machine.spare = []
        while true {
            // Everything this pass does to `machine` happens before the lock below: once
            // `finishBatch` releases the drain role, another thread may own the machine.
            let counts = machine.takeCounts()
            var retired: State?
            let action = lock.withLock { state in
                let action = state.finishBatch(
                    &batch,
                    state: machine.state,
                    reduced: counts.reduced,
                    droppedFromCancelledEffects: counts.dropped,
                    releaseWhenEmpty: releaseWhenEmpty || (handled == 0 && !machine.secondLookPays),
                    pause: handled >= budget,
                    retired: &retired)
                if case .done = action {
                    // Still inside the lock, so still ours: hand the buffer back for the next drain
                    // (unless a burst grew it: it is freed with `batch`, after the lock).
                    machine.spare = Self.keeps(batch) ? batch : []
                }
                return action
            }
            // The state published before may hold the last reference to something whose
            // `deinit` touches the loop: it goes here, outside the lock.
            retired = nil
            switch action {
            case .next:
                // Taken from the back of the reversed batch: `popLast` moves each item out, so no
                // item is copied, none is destroyed twice, and the batch ends empty with its
                // capacity (indexing and then `removeAll` cost ~175 instructions per item).
                handled &+= batch.count
                batch.reverse()
                while let item = batch.popLast() {
                    if stopRequested.load(ordering: .relaxed) {
                        batch.append(item)
                        discard(batch.reversed())
                        batch.removeAll(keepingCapacity: true)
                        break
                    }
                    machine.handle(item, core: self)
                }
            case .done(let idleWaiters):
                if first == nil && releaseWhenEmpty { machine.secondLookPays = handled > 0 }
                for waiter in idleWaiters { waiter.resume() }
                return .released
            case .emptyHeld:
                machine.spare = Self.keeps(batch) ? batch : []
                return .emptyHeld
            case .paused:
                machine.spare = batch
                return .paused
            case .tearDown:
                tearDown(machine)
                return .tornDown
            }
        }
    }

    /// Publishes the machine's state and counts now rather than at the end of the batch.
    @inlinable
    func publish(_ machine: Machine<State, Event>) {
        let counts = machine.takeCounts()
        // The state published before comes back out of the lock and is released here, after it
        // (see `drainPass`).
        _ = lock.withLock {
            $0.publish(machine.state, reduced: counts.reduced, droppedFromCancelledEffects: counts.dropped)
        }
    }

    /// Items dequeued but not handled because stop began: counted, their callers told, and
    /// observers that had not joined yet set aside to get the final state and their stop.
    @usableFromInline
    func discard(_ items: some Collection<QueueItem<State, Event>>) {
        let count = reportDiscarded(items)
        lock.withLock { state in
            if count > 0 { state.countDiscardedAtStop(count) }
            state.setAsideObservers(of: items)
        }
    }

    /// Tells whoever sent the events that stop discarded: each is reported to `onDrop`, and each
    /// `sendAndWait` caller gets `LoopError.stopped`. Returns how many items were events.
    /// (Observers among the items are not forgotten: ``CoreState/setAsideObservers(of:)``.)
    @inlinable
    @discardableResult
    func reportDiscarded(_ items: some Sequence<QueueItem<State, Event>>) -> Int {
        var count = 0
        for item in items {
            switch item {
            case .event(let event, _):
                count += 1
                instrumentation?.hooks.onDrop?(event, .discardedAtStop)
            case .submit(let event, let reply):
                count += 1
                instrumentation?.hooks.onDrop?(event, .discardedAtStop)
                reply.resume(throwing: LoopError.stopped)
            case .start, .addObserver, .removeObserver:
                break
            }
        }
        return count
    }

    // MARK: Effects

    /// Starts `effect` for feedback number `feedback`; `life` is the life of the child feature
    /// that starts it, when a child lifted into the loop does (see ``ChildLife``).
    @inlinable
    func start(_ effect: Effect<Event>, feedback: Int, life: ChildLife? = nil) -> EffectHandle? {
        switch effect.work {
        case .none:
            return nil
        case .send(let events):
            if let life {
                startChildSend(events, feedback: feedback, life: life)
                return nil
            }
            let id = nextID()
            instrumentation?.hooks.onEffect?(EffectLifecycleEvent(effect: id, feedback: feedback, kind: .started))
            let dropped = lock.withLock { $0.sendEffect(events) }
            for event in dropped { reportDrop(event, reason: .afterStop, firstWarning: false) }
            instrumentation?.hooks.onEffect?(EffectLifecycleEvent(effect: id, feedback: feedback, kind: .finished))
            return nil
        case .run(let priority, let body):
            let handle = EffectHandle(id: nextID(), feedback: feedback, isTask: true, life: life)
            instrumentation?.hooks.onEffect?(EffectLifecycleEvent(effect: handle.id, feedback: feedback, kind: .started))
            let sink = Sink(receiver: self, handle: handle)
            let marker = EffectMarker(loop: ObjectIdentifier(self), effect: handle.id)
            let stopper = driver.startTask(self, handle: handle, priority: priority, body: body, sink: sink, marker: marker)
            let unkept = lock.withLock { $0.register(RunningEffect(handle: handle, stopper: stopper)) }
            _ = unkept  // released here, after the lock
            return handle
        case .callback(let body):
            let handle = EffectHandle(id: nextID(), feedback: feedback, isTask: false, life: life)
            instrumentation?.hooks.onEffect?(EffectLifecycleEvent(effect: handle.id, feedback: feedback, kind: .started))
            let cancellation = body(Sink(receiver: self, handle: handle))
            let unkept = lock.withLock { $0.register(RunningEffect(handle: handle, stopper: .cancellation(cancellation))) }
            _ = unkept  // released here, after the lock
            return handle
        }
    }

    /// A child's `.send` effect. Its events need a handle, finished at once, only to carry the
    /// child's life: they must not reach a child added back under the same id before their turn
    /// (see ``ChildLife``). Out of line, so that the loop's own `.send` effects (W2) pay nothing.
    @inlinable
    @inline(never)
    func startChildSend(_ events: [Event], feedback: Int, life: ChildLife) {
        let handle = EffectHandle(id: nextID(), feedback: feedback, isTask: false, life: life)
        _ = handle.markFinished()
        instrumentation?.hooks.onEffect?(EffectLifecycleEvent(effect: handle.id, feedback: feedback, kind: .started))
        let dropped = lock.withLock { $0.sendEffect(events, from: handle) }
        for event in dropped { reportDrop(event, reason: .afterStop, firstWarning: false) }
        instrumentation?.hooks.onEffect?(EffectLifecycleEvent(effect: handle.id, feedback: feedback, kind: .finished))
    }

    @inlinable
    func cancel(_ handle: EffectHandle) {
        guard handle.markCancelled() else { return }
        var (entry, followup) = lock.withLock { $0.cancelled(handle) }
        entry?.stopper.stop()
        entry = nil
        instrumentation?.hooks.onEffect?(EffectLifecycleEvent(effect: handle.id, feedback: handle.feedback, kind: .cancelled))
        followup.perform()
    }

    /// A `.run` effect's task returned, or threw. Inlinable, like everything an effect's task
    /// calls, so that it is specialised where the task was made: generic, it cost ~1,500
    /// instructions of metadata lookups per effect.
    @inlinable
    func taskReturned(_ handle: EffectHandle, error: (any Error)?) {
        let ranToEnd = handle.markFinished()
        let outcome: EffectLifecycleEvent.Kind? =
            ranToEnd ? (error.map { .failed(String(describing: $0)) } ?? .finished) : nil
        // Report before the registry forgets the effect: once it does, `waitUntilIdle` and `stop`
        // may return, and whoever waited must find the end already reported.
        if let outcome {
            instrumentation?.hooks.onEffect?(EffectLifecycleEvent(effect: handle.id, feedback: handle.feedback, kind: outcome))
        }
        if ranToEnd, let error { configuration.reportEffectFailure(error, feedback: handle.feedback) }
        var followup = lock.withLock { $0.taskReturned(handle.id, outcome: outcome) }
        followup.perform()
    }

    /// An effect ended by itself (``Sink/finish()`` or ``Sink/finish(sending:)``), with `event`
    /// as its last word: the effect counts as finished *before* the event is queued, so whatever
    /// the reducer does with the event cannot cancel the effect that sent it.
    @inlinable
    func finish(_ handle: EffectHandle, sending event: Event?) {
        guard handle.markFinished() else {
            // Cancelled (or ended) before it finished: its last word is late, like any other.
            guard let event else { return }
            lock.withLock { $0.countDroppedFromCancelledEffect() }
            instrumentation?.hooks.onDrop?(event, .fromCancelledEffect)
            return
        }
        instrumentation?.hooks.onEffect?(EffectLifecycleEvent(effect: handle.id, feedback: handle.feedback, kind: .finished))
        var (followup, enqueued) = lock.withLock { $0.finished(handle, sending: event) }
        followup.perform()
        perform(enqueued, event: event)
    }

    // MARK: Observers

    /// Adds an observer through the queue, so that it sees the current state first and then
    /// every later one, none skipped. Returns its id, or `nil` if the loop had stopped (then the
    /// observer has already had the final state and its stop).
    @inlinable
    func addObserver(onState: @escaping @Sendable (State) -> Void, onStop: (@Sendable () -> Void)?) -> Int? {
        let action = lock.withLock { $0.addObserver(onState: onState, onStop: onStop) }
        switch action {
        case .enqueued(let id, let enqueue):
            perform(enqueue, event: nil)
            return id
        case .stopped(let final):
            onState(final)
            onStop?()
            return nil
        case .awaitingTeardown:
            return nil
        }
    }

    @inlinable
    func removeObserver(_ id: Int) {
        let action = lock.withLock { $0.removeObserver(id) }
        perform(action, event: nil)
    }

    // MARK: Stop, idle, statistics

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
            reportDiscarded(parked.lazy.map { .submit($0.event, $0.reply) })
        }
        if case .tearDown = action { return true }
        return false
    }

    /// Finishes observers, releases feedbacks and cancels every running effect exactly once.
    @inlinable
    func tearDown(_ machine: Machine<State, Event>) {
        machine.tearDown(core: self)
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

    /// Returns once `condition`, evaluated under the lock, holds: checked now and again at each
    /// progress the loop makes (a drain ends, an effect's work ends, teardown finishes). For tests
    /// that must wait for a precise internal condition without polling.
    func waitUntil(_ condition: @escaping (CoreState<State, Event>) -> Bool) async {
        while true {
            var holds = false
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                holds = lock.withLock { $0.waitForProgress(waiter, unless: condition) }
                if holds { waiter.resume() }
            }
            if holds { return }
        }
    }

    @inlinable
    func submit(_ event: Event) async throws -> State {
        let id = nextID()
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (reply: UnsafeContinuation<State, any Error>) in
                let action = lock.withLock { $0.submit(event, id: id, reply: reply) }
                switch action {
                case .queued:
                    break
                case .drain(let item):
                    drain(startingWith: item)
                case .parked:
                    // Cancelled before the handler could see the parked call: unpark it here.
                    if Task.isCancelled, let parked = lock.withLock({ $0.unpark(id: id) }) {
                        parked.reply.resume(throwing: LoopError.cancelled)
                    }
                case .stopped:
                    reportDrop(event, reason: .afterStop, firstWarning: false)
                    reply.resume(throwing: LoopError.stopped)
                }
            }
        } onCancel: {
            if let parked = lock.withLock({ $0.unpark(id: id) }) {
                parked.reply.resume(throwing: LoopError.cancelled)
            }
        }
    }

    @inlinable
    var published: State {
        lock.withLock { $0.published }
    }

    @inlinable
    var statistics: LoopStatistics {
        lock.withLock { state in
            var statistics = state.statistics
            statistics.effectsRunning = state.effects.count { $0.handle.isRunning }
            return statistics
        }
    }
}

/// Marks the tasks of a loop's `.run` effects, so that ``Loop/stop()``, ``Loop/run()`` and
/// ``Loop/waitUntilIdle()`` called from inside one can tell, instead of waiting for themselves.
@usableFromInline
struct EffectMarker: Sendable {
    @usableFromInline let loop: ObjectIdentifier
    @usableFromInline let effect: UInt64

    @inlinable
    init(loop: ObjectIdentifier, effect: UInt64) {
        self.loop = loop
        self.effect = effect
    }

    @TaskLocal static var current: EffectMarker?

    /// Runs an effect's body with `marker` as the current task's effect.
    @usableFromInline
    static func inside(_ marker: EffectMarker, _ body: @Sendable () async throws -> Void) async throws {
        try await $current.withValue(marker) { try await body() }
    }
}

/// A loop's ``LoopInstrumentation``, held by reference (see ``LoopCore/instrumentation``).
@usableFromInline
final class InstrumentationHooks<State: Sendable, Event: Sendable>: Sendable {
    @usableFromInline let hooks: LoopInstrumentation<State, Event>

    @inlinable
    init(_ hooks: LoopInstrumentation<State, Event>) {
        self.hooks = hooks
    }
}
