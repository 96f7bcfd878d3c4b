import Logging
import Synchronization

/// Which backend drives the machine.
@usableFromInline
enum Engine<State: Sendable, Event: Sendable>: Sendable {
    case callback(CallbackDriver<State, Event>)
    case actor(LoopActor<State, Event>)
}

/// The engine behind a ``Loop``, shared by both backends: the queue and its drain role, the
/// registry of running effects, stop, idle and statistics. The backends differ only in
/// ``drain(startingWith:)`` and ``tearDown()`` — where the machine runs.
///
/// Effects' sinks and tasks hold the core, never the ``Loop``, so releasing the last reference to
/// a loop runs its `deinit`, which stops the core and lets every effect go.
@usableFromInline
final class LoopCore<State: Sendable, Event: Sendable>: EventReceiver, Sendable {
    @usableFromInline let lock: Lock<CoreState<State, Event>>
    /// Set when stop begins, so that a drain under way stops reducing mid-batch. A hint read
    /// without the lock; the lock-protected phase is the authority.
    @usableFromInline let stopRequested = Atomic<Bool>(false)
    @usableFromInline let ids = Atomic<UInt64>(0)
    @usableFromInline let configuration: LoopConfiguration
    @usableFromInline let instrumentation: LoopInstrumentation<State, Event>?
    @usableFromInline let engine: Engine<State, Event>

    @inlinable
    init(
        initial: State,
        reduce: @escaping @Sendable (inout State, Event) -> Void,
        feedbacks: [Feedback<State, Event>],
        backend: Backend,
        configuration: LoopConfiguration,
        instrumentation: LoopInstrumentation<State, Event>?
    ) {
        self.lock = Lock(CoreState(initial: initial, capacity: configuration.capacity.limit))
        self.configuration = configuration
        self.instrumentation = instrumentation
        let machine = Machine(initial: initial, reduce: reduce, feedbacks: feedbacks)
        switch backend {
        case .callback: self.engine = .callback(CallbackDriver(machine: machine))
        case .actor: self.engine = .actor(LoopActor(machine: machine))
        }
    }

    @inlinable
    func nextID() -> UInt64 {
        ids.wrappingAdd(1, ordering: .relaxed).newValue
    }

    // MARK: Intake

    /// Lets the feedbacks see the initial state. Called once, right after init.
    @inlinable
    func start() {
        let action = lock.withLock { $0.enqueue(.start, external: false) }
        perform(action, event: nil)
    }

    @inlinable
    func receive(_ event: Event, from handle: EffectHandle?) {
        let action = lock.withLock { state in
            if let handle {
                state.enqueue(event: event, from: handle)
            } else {
                state.enqueue(.event(event, nil), external: true)
            }
        }
        perform(action, event: event)
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
        if let event { instrumentation?.onDrop?(event, reason) }
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

    /// The caller holds the drain role: run the machine, starting with `item`.
    @inlinable
    func drain(startingWith item: QueueItem<State, Event>) {
        switch engine {
        case .callback(let driver):
            drainLoop(driver.machine, first: item)
        case .actor(let actor):
            Task { await actor.drain(self, first: item) }
        }
    }

    /// How a drain pass ended.
    @usableFromInline
    enum DrainEnd {
        /// The queue was empty and the role was released.
        case released
        /// The queue was empty and, as asked, the role is still held.
        case emptyHeld
        /// Stop began; the loop is torn down.
        case tornDown
    }

    /// Handles `first`, then batch after batch until the queue is empty or stop begins. Runs in
    /// the drain role only, so it may touch `machine`. With `releaseWhenEmpty: false` the holder
    /// keeps the role when it finds the queue empty, to look again shortly.
    @inlinable
    @discardableResult
    func drainLoop(
        _ machine: Machine<State, Event>,
        first: QueueItem<State, Event>?,
        releaseWhenEmpty: Bool = true
    ) -> DrainEnd {
        if let first {
            if stopRequested.load(ordering: .relaxed) {
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
            let reduced = machine.reduced
            let dropped = machine.droppedFromCancelledEffects
            machine.reduced = 0
            machine.droppedFromCancelledEffects = 0
            let action = lock.withLock { state in
                let action = state.finishBatch(
                    &batch,
                    state: machine.state,
                    reduced: reduced,
                    droppedFromCancelledEffects: dropped,
                    releaseWhenEmpty: releaseWhenEmpty)
                if case .done = action {
                    // Still inside the lock, so still ours: hand the buffer back for the next drain.
                    machine.spare = batch
                }
                return action
            }
            switch action {
            case .next:
                var index = batch.startIndex
                while index < batch.endIndex {
                    if stopRequested.load(ordering: .relaxed) {
                        discard(batch[index...])
                        break
                    }
                    machine.handle(batch[index], core: self)
                    index += 1
                }
                batch.removeAll(keepingCapacity: true)
            case .done(let idleWaiters):
                for waiter in idleWaiters { waiter.resume() }
                return .released
            case .emptyHeld:
                machine.spare = batch
                return .emptyHeld
            case .tearDown:
                tearDown(machine)
                return .tornDown
            }
        }
    }

    /// Publishes the machine's state and counts now rather than at the end of the batch.
    @inlinable
    func publish(_ machine: Machine<State, Event>) {
        let reduced = machine.reduced
        let dropped = machine.droppedFromCancelledEffects
        machine.reduced = 0
        machine.droppedFromCancelledEffects = 0
        lock.withLock { $0.publish(machine.state, reduced: reduced, droppedFromCancelledEffects: dropped) }
    }

    /// Items dequeued but not handled because stop began: counted, and their callers told.
    @usableFromInline
    func discard(_ items: some Collection<QueueItem<State, Event>>) {
        let count = reportDiscarded(items)
        if count > 0 {
            lock.withLock { $0.statistics.eventsDiscardedAtStop += count }
        }
    }

    /// Tells whoever sent the events that stop discarded: each is reported to `onDrop`, and each
    /// `sendAndWait` caller gets `LoopError.stopped`. Returns how many items were events.
    @usableFromInline
    @discardableResult
    func reportDiscarded(_ items: some Sequence<QueueItem<State, Event>>) -> Int {
        var count = 0
        for item in items {
            switch item {
            case .event(let event, _):
                count += 1
                instrumentation?.onDrop?(event, .discardedAtStop)
            case .submit(let event, let reply):
                count += 1
                instrumentation?.onDrop?(event, .discardedAtStop)
                reply.resume(throwing: LoopError.stopped)
            case .start, .addObserver, .removeObserver:
                break
            }
        }
        return count
    }

    // MARK: Effects

    @inlinable
    func start(_ effect: Effect<Event>, feedback: Int) -> EffectHandle? {
        switch effect.work {
        case .none:
            return nil
        case .send(let events):
            let id = nextID()
            instrumentation?.onEffect?(EffectLifecycleEvent(effect: id, feedback: feedback, kind: .started))
            let dropped = lock.withLock { state -> Bool in
                state.statistics.effectsStarted += 1
                state.statistics.effectsFinished += 1
                for event in events {
                    // In the drain role the queue is never idle, so this only queues or drops.
                    if case .dropped = state.enqueue(.event(event, nil), external: false) { return true }
                }
                return false
            }
            if dropped { reportDrop(nil, reason: .afterStop, firstWarning: false) }
            instrumentation?.onEffect?(EffectLifecycleEvent(effect: id, feedback: feedback, kind: .finished))
            return nil
        case .run(let priority, let body):
            let handle = EffectHandle(id: nextID(), feedback: feedback)
            instrumentation?.onEffect?(EffectLifecycleEvent(effect: handle.id, feedback: feedback, kind: .started))
            let sink = Sink(receiver: self, handle: handle)
            let task = Task(priority: priority.map(TaskPriority.init(rawValue:))) {
                do {
                    try await body(sink)
                    self.effectFinished(handle, error: nil)
                } catch {
                    self.effectFinished(handle, error: error)
                }
            }
            lock.withLock { $0.register(RunningEffect(handle: handle, stopper: .task(task))) }
            return handle
        case .callback(let body):
            let handle = EffectHandle(id: nextID(), feedback: feedback)
            instrumentation?.onEffect?(EffectLifecycleEvent(effect: handle.id, feedback: feedback, kind: .started))
            let cancellation = body(Sink(receiver: self, handle: handle))
            lock.withLock { $0.register(RunningEffect(handle: handle, stopper: .cancellation(cancellation))) }
            return handle
        }
    }

    @inlinable
    func cancel(_ handle: EffectHandle) {
        guard handle.markCancelled() else { return }
        let (effect, wakeups) = lock.withLock { state -> (RunningEffect?, CoreState<State, Event>.Wakeups) in
            state.statistics.effectsCancelled += 1
            guard let effect = state.effects[handle.id] else { return (nil, .init()) }
            if case .cancellation = effect.stopper {
                // A callback effect ends with its cancellation; a task ends when it returns.
                return (effect, state.effectEnded(id: handle.id, outcome: nil))
            }
            return (effect, .init())
        }
        effect?.stopper.stop()
        instrumentation?.onEffect?(EffectLifecycleEvent(effect: handle.id, feedback: handle.feedback, kind: .cancelled))
        wakeups.resume()
    }

    @usableFromInline
    func effectFinished(_ handle: EffectHandle, error: (any Error)?) {
        let ranToEnd = handle.markFinished()
        let outcome: EffectLifecycleEvent.Kind? =
            ranToEnd ? (error.map { .failed(String(describing: $0)) } ?? .finished) : nil
        // Report before the registry forgets the effect: once it does, `waitUntilIdle` and `stop`
        // may return, and whoever waited must find the end already reported.
        if let outcome {
            instrumentation?.onEffect?(EffectLifecycleEvent(effect: handle.id, feedback: handle.feedback, kind: outcome))
        }
        if ranToEnd, let error {
            configuration.reportEffectFailure(error, feedback: handle.feedback)
        }
        let wakeups = lock.withLock { $0.effectEnded(id: handle.id, outcome: outcome) }
        wakeups.resume()
    }

    // MARK: Observers

    /// Adds an observer through the queue, so that it sees the current state first and then
    /// every later one, none skipped. Returns its id, or `nil` if the loop had stopped (then the
    /// observer has already had the final state and its stop).
    @usableFromInline
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
        }
    }

    @usableFromInline
    func removeObserver(_ id: Int) {
        let action = lock.withLock { state -> CoreState<State, Event>.EnqueueAction in
            // After stop, observers are already gone; nothing to queue or report.
            guard state.phase == .running else { return .queued }
            return state.enqueue(.removeObserver(id), external: false)
        }
        perform(action, event: nil)
    }

    // MARK: Stop, idle, statistics

    /// Begins stopping without waiting: no event is reduced from now on, queued ones are
    /// discarded, and every effect is cancelled once the drain role is free.
    @usableFromInline
    func beginStop() {
        stopRequested.store(true, ordering: .relaxed)
        let action = lock.withLock { $0.beginStop() }
        switch action {
        case .alreadyStopping:
            return
        case .drainerTearsDown(let discarded, let parked), .tearDown(let discarded, let parked):
            reportDiscarded(discarded)
            reportDiscarded(parked.lazy.map { .submit($0.event, $0.reply) })
        }
        if case .tearDown = action { tearDown() }
    }

    /// The caller holds the drain role after stop began: tear down where the machine lives.
    @usableFromInline
    func tearDown() {
        switch engine {
        case .callback(let driver):
            tearDown(driver.machine)
        case .actor(let actor):
            Task { await actor.tearDown(self) }
        }
    }

    /// Finishes observers, releases feedbacks and cancels every running effect exactly once.
    @usableFromInline
    func tearDown(_ machine: Machine<State, Event>) {
        machine.tearDown()
        let running = lock.withLock { Array($0.effects.values) }
        var cancelled = 0
        var endedNow: [UInt64] = []
        for effect in running where effect.handle.markCancelled() {
            cancelled += 1
            effect.stopper.stop()
            if case .cancellation = effect.stopper { endedNow.append(effect.handle.id) }
            instrumentation?.onEffect?(
                EffectLifecycleEvent(effect: effect.handle.id, feedback: effect.handle.feedback, kind: .cancelled))
        }
        let wakeups = lock.withLock { $0.tornDown(cancelled: cancelled, endedNow: endedNow) }
        wakeups.resume()
    }

    /// Returns once the loop has stopped and every effect has ended.
    @usableFromInline
    func waitUntilStopped() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let stopped = lock.withLock { state -> Bool in
                if state.phase == .stopped { return true }
                state.stopWaiters.append(waiter)
                return false
            }
            if stopped { waiter.resume() }
        }
    }

    @usableFromInline
    func waitUntilIdle() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let idle = lock.withLock { state -> Bool in
                if state.isIdle { return true }
                state.idleWaiters.append(waiter)
                return false
            }
            if idle { waiter.resume() }
        }
    }

    @usableFromInline
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
                    instrumentation?.onDrop?(event, .afterStop)
                    reply.resume(throwing: LoopError.stopped)
                }
            }
        } onCancel: {
            if let parked = lock.withLock({ $0.unpark(id: id) }) {
                parked.reply.resume(throwing: LoopError.cancelled)
            }
        }
    }

    @usableFromInline
    var published: State {
        lock.withLock { $0.published }
    }

    @usableFromInline
    var statistics: LoopStatistics {
        lock.withLock { state in
            var statistics = state.statistics
            statistics.effectsRunning = state.effects.values.count { $0.handle.isRunning }
            return statistics
        }
    }
}
