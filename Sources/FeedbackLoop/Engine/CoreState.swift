/// Everything about a loop that more than one thread touches, guarded by the loop's one lock.
///
/// A state machine in the style of swift-nio: each mutating method is one transition and returns
/// what the caller must do *after* leaving the lock (drain, wake waiters, tear down, release), so
/// nothing is resumed or called back while the lock is held — and nothing whose release can run
/// user code is released under it either: replaced published states, registry entries (a
/// `Cancellation` or a task that may capture the loop's owner) and waiters all leave through the
/// returned actions and die after the lock is dropped.
///
/// Its fields are changed only by its own transitions (the methods below); `LoopCore` never writes
/// a field. They are not `private` only because `@inlinable` transitions — which a client binary
/// specialises — cannot touch private storage; tests read them.
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
    /// Every effect whose work may still be under way: a `.run` effect until its task returns
    /// (even after it was cancelled or finished with ``Sink/finish(sending:)``), a `.callback`
    /// effect until it finishes or its cancellation has run.
    @usableFromInline var effects = EffectRegistry()
    /// Effects whose work ended before the drain role got to register them (a `.run` body that
    /// returned at once, a callback effect that finished inside its `body`). Almost always empty.
    @usableFromInline var endedBeforeRegistration: Set<UInt64> = []
    @usableFromInline var parked: [ParkedSubmit<State, Event>] = []
    @usableFromInline var idleWaiters: [CheckedContinuation<Void, Never>] = []
    /// Resumed at the next progress of any kind; see ``LoopCore/waitUntil(_:)``.
    @usableFromInline var progressWaiters: [CheckedContinuation<Void, Never>] = []
    @usableFromInline var stopWaiters: [StopWaiter] = []
    /// Observers that joined while a stop was under way: the final state is not published yet,
    /// so they get it, and their stop, once teardown is done.
    @usableFromInline var observersAwaitingTeardown: [ObserverEntry<State>] = []
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
        guard phase == .running else {
            statistics.eventsDroppedAfterStop += 1
            defer { warnedAfterStop = true }
            return .dropped(.afterStop, firstWarning: !warnedAfterStop)
        }
        guard draining else {
            draining = true
            return .takeRole
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
    /// Always inlined: it is every send's one transition, and left to the optimiser's budget it
    /// was sometimes outlined behind a call (W1: +21 instructions per send).
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

    @usableFromInline
    enum SubmitAction {
        case queued
        case drain(QueueItem<State, Event>)
        case parked
        /// Refused, and counted in `eventsDroppedAfterStop`: the loop had stopped.
        case stopped
    }

    @inlinable
    mutating func submit(_ event: Event, id: UInt64, reply: UnsafeContinuation<State, any Error>) -> SubmitAction {
        guard phase == .running else {
            statistics.eventsDroppedAfterStop += 1
            return .stopped
        }
        if externalQueued >= capacity || !parked.isEmpty {
            parked.append(ParkedSubmit(id: id, event: event, reply: reply))
            return .parked
        }
        switch enqueue(.submit(event, reply), external: true) {
        case .queued: return .queued
        case .drain(let item): return .drain(item)
        case .dropped(let reason, _):
            preconditionFailure("CoreState.submit: an admitted submit was dropped (\(reason)) in phase \(phase)")
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
        precondition(draining, "CoreState.finishBatch: the drain role is not held (phase \(phase))")
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
        precondition(draining, "CoreState.finishInPlace: the drain role is not held (phase \(phase))")
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

    // MARK: Effects

    /// A started effect joins the registry, unless its work already ended on another thread.
    /// Returns the entry when it was not kept, for the caller to release after the lock.
    @inlinable
    mutating func register(_ effect: RunningEffect) -> RunningEffect? {
        statistics.effectsStarted += 1
        if !endedBeforeRegistration.isEmpty && endedBeforeRegistration.remove(effect.handle.id) != nil { return effect }
        effects.insert(effect)
        return nil
    }

    /// What to do after the lock once effects ended: release their registry entries first (their
    /// `deinit`s may run user code), then resume whoever waited for idle or for stop.
    @usableFromInline
    struct Followup {
        /// The entry of the effect whose work ended; the effects teardown ended, in
        /// `releasedAtTeardown`. Apart, so that an effect's end (once per effect) fills no array,
        /// which cost an allocation per effect.
        @usableFromInline var released: RunningEffect?
        @usableFromInline var releasedAtTeardown: [RunningEffect] = []
        @usableFromInline var idle: [CheckedContinuation<Void, Never>] = []
        @usableFromInline var stopped: [StopWaiter] = []
        /// Observers that joined during the stop, and the final state they get.
        @usableFromInline var lateObservers: [ObserverEntry<State>] = []
        @usableFromInline var finalState: State?
        @inlinable init() {}

        @inlinable
        mutating func perform() {
            released = nil
            releasedAtTeardown = []
            if let finalState {
                for observer in lateObservers {
                    observer.onState(finalState)
                    observer.onStop?()
                }
            }
            lateObservers = []
            finalState = nil
            for waiter in idle { waiter.resume() }
            for waiter in stopped { waiter.continuation.resume() }
        }
    }

    /// Counts how an effect came out: `.finished` or `.failed` when it ended by itself. A
    /// cancelled effect was counted when the loop cancelled it.
    @inlinable
    mutating func count(_ outcome: EffectLifecycleEvent.Kind) {
        switch outcome {
        case .finished: statistics.effectsFinished += 1
        case .failed: statistics.effectsFailed += 1
        case .cancelled: statistics.effectsCancelled += 1
        case .started: preconditionFailure("CoreState.count: .started is not an outcome")
        }
    }

    /// An effect's work is over (its task returned, its callback finished or was cancelled): it
    /// leaves the registry, and waiters for idle and stop may go.
    @inlinable
    mutating func workEnded(id: UInt64) -> Followup {
        var followup = Followup()
        if let entry = removeEffect(id) {
            followup.released = entry
        } else {
            endedBeforeRegistration.insert(id)
        }
        wakeWaiters(&followup)
        return followup
    }

    /// Takes an effect out of the registry; after a burst of effects, the emptied table goes too.
    @inlinable
    mutating func removeEffect(_ id: UInt64) -> RunningEffect? {
        let entry = effects.remove(id)
        effects.shrinkIfEmpty(keeping: Self.keptQueueCapacity)
        return entry
    }

    @inlinable
    mutating func wakeWaiters(_ followup: inout Followup) {
        if phase == .stopping(tornDown: true) {
            if effects.isEmpty {
                phase = .stopped
                followup.stopped += stopWaiters
                stopWaiters = []
            } else if effects.count == 1, let last = effects.values.first?.handle.id, stopWaiters.contains(where: { $0.except == last }) {
                // Only the effect that called `stop()` is left: its own waiters may go.
                followup.stopped += stopWaiters.filter { $0.except == last }
                stopWaiters.removeAll { $0.except == last }
            }
        }
        followup.idle = takeIdleWaitersIfIdle()
    }

    /// A `.send` effect: counted as started and finished at once, its events queued behind the
    /// current batch (the drain role is held, so the queue is never idle). Returns the events
    /// dropped because stop has begun.
    @inlinable
    mutating func sendEffect(_ events: [Event]) -> [Event] {
        sendEffect(events, handle: nil)
    }

    /// A child feature's `.send` effect: its events carry `handle`, finished, for the child's
    /// life (see ``ChildLife``).
    @inlinable
    mutating func sendEffect(_ events: [Event], from handle: EffectHandle) -> [Event] {
        sendEffect(events, handle: handle)
    }

    /// Inlined into both, so that the loop's own `.send` effects (W2) carry no handle at all.
    @inlinable
    @inline(__always)
    mutating func sendEffect(_ events: [Event], handle: EffectHandle?) -> [Event] {
        statistics.effectsStarted += 1
        statistics.effectsFinished += 1
        var dropped: [Event] = []
        for event in events {
            if case .dropped = enqueue(.event(event, handle), external: false) { dropped.append(event) }
        }
        return dropped
    }

    /// The loop cancelled a running effect: counted, and its registry entry returned so that the
    /// caller can stop it after the lock. A callback effect's work ends with its cancellation; a
    /// task's when it returns.
    @inlinable
    mutating func cancelled(_ handle: EffectHandle) -> (RunningEffect?, Followup) {
        count(.cancelled)
        if handle.isTask { return (effects[handle.id], Followup()) }
        // A callback effect's work ends with its cancellation: its entry leaves the registry now,
        // in one lookup, and goes back to the caller, who stops it and releases it after the lock.
        guard let entry = removeEffect(handle.id) else { return (nil, Followup()) }
        var followup = Followup()
        wakeWaiters(&followup)
        return (entry, followup)
    }

    /// A `.run` effect's task returned; `outcome` is how it ended, if it ran to its end (a
    /// cancelled one was counted when it was cancelled).
    @inlinable
    mutating func taskReturned(_ id: UInt64, outcome: EffectLifecycleEvent.Kind?) -> Followup {
        if let outcome { count(outcome) }
        return workEnded(id: id)
    }

    /// An effect finished by itself, with `event` as its last word, queued. A task's work lasts
    /// until it returns; a callback effect's ends here.
    @inlinable
    mutating func finished(_ handle: EffectHandle, sending event: Event?) -> (Followup, EnqueueAction) {
        count(.finished)
        let enqueued = event.map { enqueue(.event($0, handle), external: false) } ?? .queued
        return (handle.isTask ? Followup() : workEnded(id: handle.id), enqueued)
    }

    /// Teardown is about to cancel these: every effect whose work may still be under way.
    @inlinable
    func effectsToCancel() -> [RunningEffect] {
        effects.values
    }

    /// The effects still running, in start order, but `except` (the caller's own effect).
    @inlinable
    func unfinishedEffects(except: UInt64?) -> [EffectIdentity] {
        effects.values.lazy
            .filter { $0.handle.id != except }
            .map { EffectIdentity(effect: $0.handle.id, feedback: $0.handle.feedback) }
            .sorted { $0.effect < $1.effect }
    }

    @inlinable
    mutating func countDiscardedAtStop(_ count: Int) {
        statistics.eventsDiscardedAtStop += count
    }

    @inlinable
    mutating func countDroppedFromCancelledEffect() {
        statistics.eventsDroppedFromCancelledEffects += 1
    }

    /// An event for a child feature that no longer exists (see `EffectDoor`).
    @inlinable
    mutating func countOrphaned() {
        statistics.eventsOrphaned += 1
    }

    // MARK: Waiting

    /// `true` if the loop is idle now; otherwise `waiter` is resumed when it becomes idle.
    @inlinable
    mutating func waitForIdle(_ waiter: CheckedContinuation<Void, Never>) -> Bool {
        if isIdle { return true }
        idleWaiters.append(waiter)
        return false
    }

    /// `true` if `condition` holds now; otherwise `waiter` is resumed at the loop's next progress.
    mutating func waitForProgress(_ waiter: CheckedContinuation<Void, Never>, unless condition: (Self) -> Bool) -> Bool {
        if condition(self) { return true }
        progressWaiters.append(waiter)
        return false
    }

    // MARK: Observers

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
        case .running:
            return .enqueued(id: id, enqueue(.addObserver(entry), external: false))
        case .stopping(tornDown: false):
            observersAwaitingTeardown.append(entry)
            return .awaitingTeardown
        case .stopping(tornDown: true), .stopped:
            return .stopped(published)
        }
    }

    /// An observer leaves through the queue, in order with the states it sees. After stop,
    /// observers are already gone: nothing to queue.
    @inlinable
    mutating func removeObserver(_ id: Int) -> EnqueueAction {
        guard phase == .running else { return .queued }
        return enqueue(.removeObserver(id), external: false)
    }

    // MARK: Stopping

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
            case .event, .submit, .start:
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
        guard phase == .running else { return .alreadyStopping }
        phase = .stopping(tornDown: false)
        let discarded = items
        let parked = self.parked
        items = []
        self.parked = []
        externalQueued = 0
        statistics.eventsDiscardedAtStop += discarded.count { $0.isEvent } + parked.count
        setAsideObservers(of: discarded)
        if draining {
            return .drainerTearsDown(discarded: discarded, parked: parked)
        }
        draining = true
        return .tearDown(discarded: discarded, parked: parked)
    }

    /// Teardown cancelled every effect: `cancelled` of them were still running; the callback
    /// effects among them (`endedNow`) ended with their cancellation.
    @inlinable
    mutating func tornDown(cancelled: Int, endedNow: [UInt64]) -> Followup {
        precondition(
            phase == .stopping(tornDown: false) && draining,
            "CoreState.tornDown: teardown outside a stop, or without the drain role (phase \(phase), draining \(draining))")
        statistics.effectsCancelled += cancelled
        var followup = Followup()
        for id in endedNow {
            if let entry = removeEffect(id) { followup.releasedAtTeardown.append(entry) }
        }
        phase = .stopping(tornDown: true)
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
        if phase == .stopping(tornDown: true), let except = waiter.except, effects.count == 1, effects[except] != nil {
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
}

/// A caller of ``Loop/stop()`` or ``Loop/run()`` waiting for every effect to end — every effect
/// but `except`, the one it runs inside, when it was called from an effect.
@usableFromInline
struct StopWaiter: Sendable {
    @usableFromInline let id: UInt64
    @usableFromInline let except: UInt64?
    @usableFromInline let continuation: CheckedContinuation<Void, Never>

    @inlinable
    init(id: UInt64, except: UInt64?, continuation: CheckedContinuation<Void, Never>) {
        self.id = id
        self.except = except
        self.continuation = continuation
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
