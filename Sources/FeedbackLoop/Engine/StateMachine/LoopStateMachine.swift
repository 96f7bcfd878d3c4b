/// Everything about a loop that more than one thread touches, guarded by the loop's one lock.
///
/// A state machine in the style of swift-nio: each mutating method is one transition and returns
/// what the caller must do *after* leaving the lock (drain, wake waiters, tear down, release), so
/// nothing is resumed or called back while the lock is held — and nothing whose release can run
/// user code is released under it either: replaced published states, registry entries (a
/// `Cancellation` or a task that may capture the loop's owner) and waiters all leave through the
/// returned actions and die after the lock is dropped.
///
/// It composes small sub-machines, each the sole writer of its own fields and trapping — naming
/// itself, its state and the transition — where a transition makes no sense:
/// ``Phase`` (the loop's life and its drain role, consulted first by every transition),
/// ``Intake`` (the queue, parked `sendAndWait` calls, the capacity), ``RunningEffects``,
/// ``Waiting`` (idle and stop waiters), ``Publication`` (the published state and the counts),
/// ``ObserversAtStop`` and ``HostSlot`` (where the `stream` host parks). This type coordinates them and writes nothing of its own: its fields'
/// setters are private to this file, where every transition is, so `LoopEngine` and the
/// backends (`callback`, `actor`, `stream`) can read them but only change them through the
/// transitions. Nothing here is `private` outright only because `@inlinable` transitions — which
/// an adopter's binary specialises — cannot reach private storage.
///
/// The drain role: the phase is `draining` while one thread (`callback`), the actor (`actor`) or
/// the host task (`stream`) is handling queue items. Only the holder touches the state's owner
/// (state, reducer, feedbacks, observers). The role is taken by the sender that finds the loop
/// idle and released only by the holder, under the lock, when it finds the queue empty — so an
/// item enqueued while the holder finishes is always either seen by the holder or starts a new
/// drain (no lost wake-up).
@usableFromInline
struct LoopStateMachine<State: Sendable, Event: Sendable>: Sendable {
    @usableFromInline private(set) var phase = Phase.idle
    @usableFromInline private(set) var intake: Intake<State, Event>
    @usableFromInline private(set) var effects = RunningEffects()
    @usableFromInline private(set) var waiting = Waiting()
    @usableFromInline private(set) var publication: Publication<State>
    @usableFromInline private(set) var observersAtStop = ObserversAtStop<State>.collecting([])
    @usableFromInline private(set) var host = HostSlot<Event>.away

    @inlinable
    init(initial: State, capacity: Int) {
        self.intake = Intake(capacity: capacity)
        self.publication = Publication(initial: initial)
    }

    @inlinable
    var published: State { publication.published }

    /// The counts, with the effects still running as of now.
    @inlinable
    var statistics: LoopStatistics {
        var statistics = publication.statistics
        statistics.effectsRunning = effects.countRunning()
        return statistics
    }

    @inlinable
    var isIdle: Bool {
        phase == .stopped || (phase == .idle && intake.isEmpty && effects.isEmpty)
    }

    /// Queue buffers keep their capacity from batch to batch, so that a steady flow allocates
    /// nothing; but not the peak of a burst: an empty buffer above this many items is given back
    /// (2,000,000 back-to-back sends otherwise left an idle loop holding ~144 MiB for life). The
    /// registry of running effects keeps as many entries.
    @inlinable
    static var keptQueueCapacity: Int { 1_024 }
}

// MARK: - Intake: what may join the queue, and who then holds the drain role

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
            publication.countDropped(.afterStop)
            return .dropped(.afterStop, firstWarning: intake.firstWarningAfterStop())
        case .queue:
            break
        }
        if external && !intake.reserveExternal() {
            publication.countDropped(.overCapacity)
            return .dropped(.overCapacity, firstWarning: intake.firstWarningOverCapacity())
        }
        return .append
    }

    @inlinable
    mutating func enqueue(_ item: QueueItem<State, Event>, external: Bool) -> EnqueueAction {
        switch admit(external: external) {
        case .takeRole:
            return .drain(item)
        case .append:
            intake.append(item)
            return .queued
        case .dropped(let reason, let firstWarning):
            return .dropped(reason, firstWarning: firstWarning)
        }
    }

    @usableFromInline
    enum SendAction {
        /// The loop was idle: the caller now holds the drain role with the event in hand, not
        /// queued, and reduces it first — or, when the loop's host was parked (see
        /// ``HostSlot``), took the role for the host and resumes `host` with the event after
        /// the lock.
        case reduce(host: UnsafeContinuation<HostWake<Event>, Never>?)
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
            publication.countDropped(.fromCancelledEffect)
            return .dropped(.fromCancelledEffect, firstWarning: false)
        }
        switch admit(external: handle == nil) {
        case .takeRole:
            return .reduce(host: host.takeForEvent())
        case .append:
            intake.append(.event(event, handle))
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
            publication.countDropped(.fromCancelledEffect)
            return .dropped(.fromCancelledEffect, firstWarning: false)
        }
        return enqueue(item, external: handle == nil)
    }

    /// What ``send(contentsOf:)`` did with a batch of events: the events from `dropped.from` on,
    /// if any, were refused and counted; the ones before it entered the loop, in order, with
    /// nothing between them.
    @usableFromInline
    enum BatchAction {
        /// The loop was idle: the caller now holds the drain role with the first event in hand,
        /// as ``SendAction/reduce(host:)`` says; the others it admitted are queued behind it.
        case reduce(host: UnsafeContinuation<HostWake<Event>, Never>?, dropped: DroppedTail?)
        /// Queued behind the current drain.
        case queued(dropped: DroppedTail?)
        /// Stop had begun: none entered, every one counted.
        case dropped(DroppedTail)
    }

    /// The events of a batch refused from index `from` on, all for `reason`: after stop every
    /// one is, and a full bounded queue refuses the ones past its room. `firstWarning` is true
    /// the first time for this reason, and goes with the first of them.
    @usableFromInline
    struct DroppedTail {
        @usableFromInline let from: Int
        @usableFromInline let reason: DropReason
        @usableFromInline let firstWarning: Bool

        @inlinable
        init(from: Int, reason: DropReason, firstWarning: Bool) {
            self.from = from
            self.reason = reason
            self.firstWarning = firstWarning
        }
    }

    /// ``Loop/send(contentsOf:)``: `events` (not empty) from outside, admitted in one
    /// transition, so that no other item lands between them and the drain role is taken, and
    /// a parked host woken, at most once. Each counts against the capacity like a ``send(_:from:)``
    /// (the first one in hand, when it takes the role, does not, as a `send`'s does not); what
    /// does not fit, or comes after stop began, is counted here and reported by the caller after
    /// the lock.
    @inlinable
    mutating func send(contentsOf events: [Event]) -> BatchAction {
        admitBatch(count: events.count, host: true) { intake, range in
            for index in range { intake.append(.event(events[index], nil)) }
        }
    }

    /// ``send(contentsOf:)`` for a loop that propagates `ServiceContext`: the same rules, for
    /// items that carry each event with its context. On `.reduce` the caller drains starting
    /// with `items[0]`, as after ``enqueue(_:external:)``'s `.drain`; the host is never taken
    /// here (the backend's drain wakes it, as for any queue item).
    @inlinable
    mutating func enqueue(contentsOf items: [QueueItem<State, Event>]) -> BatchAction {
        admitBatch(count: items.count, host: false) { intake, range in
            for index in range { intake.append(items[index]) }
        }
    }

    @inlinable
    mutating func admitBatch(
        count: Int, host takesHost: Bool, append: (inout Intake<State, Event>, Range<Int>) -> Void
    ) -> BatchAction {
        if count == 0 { preconditionFailure("LoopStateMachine.admitBatch: an empty batch reached the lock") }
        let first: Int
        switch phase.admit() {
        case .takeRole:
            first = 1
        case .refuse:
            publication.countDropped(.afterStop, count)
            return .dropped(DroppedTail(from: 0, reason: .afterStop, firstWarning: intake.firstWarningAfterStop()))
        case .queue:
            first = 0
        }
        let end = first + intake.reserveExternal(upTo: count - first)
        append(&intake, first ..< end)
        var dropped: DroppedTail?
        if end < count {
            publication.countDropped(.overCapacity, count - end)
            dropped = DroppedTail(from: end, reason: .overCapacity, firstWarning: intake.firstWarningOverCapacity())
        }
        guard first == 1 else { return .queued(dropped: dropped) }
        return .reduce(host: takesHost ? host.takeForEvent() : nil, dropped: dropped)
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
            publication.countDropped(.afterStop)
            return .stopped
        }
        if intake.mustPark {
            intake.park(ParkedSubmit(id: id, event: event, reply: reply, cause: cause))
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
        guard let parked = intake.unpark(id: id) else { return nil }
        publication.countDropped(.cancelledWhileWaiting)
        return parked
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
        let entry = ObserverEntry(id: intake.observerID(), onState: onState, onStop: onStop)
        switch phase {
        case .idle, .draining:
            return .enqueued(id: entry.id, enqueue(.addObserver(entry), external: false))
        case .stopping:
            observersAtStop.setAside(entry)
            return .awaitingTeardown
        case .tornDown, .stopped:
            return .stopped(publication.published)
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

// MARK: - The drain role: a batch or an in-place event ends, the state is published, the role is kept or released

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
        retired = publication.publish(state, reduced: reduced, droppedFromCancelledEffects: droppedFromCancelledEffects)
        guard goesOn else { return .tearDown }
        if intake.isEmpty {
            intake.shrink(keeping: Self.keptQueueCapacity)
            guard releaseWhenEmpty else { return .keepRole }
            return release()
        }
        if pause { return .pause }
        intake.takeBatch(into: &batch)
        return .drainMore
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
        retired = publication.publish(state, reduced: reduced, droppedFromCancelledEffects: droppedFromCancelledEffects)
        guard goesOn else { return .tearDown }
        guard intake.isEmpty else { return .drainMore }
        return release()
    }

    /// The queue is empty: the holder gives the drain role up, and whoever waited for the loop
    /// to be idle (or for its progress) may go. Checks for waiters before taking any, so that a
    /// loop nobody waits for builds no array on its way to idle.
    @inlinable
    @inline(__always)
    mutating func release() -> DrainAction {
        phase.release()
        if !waiting.hasWaiters { return .released }
        return .releasedWaking(takeReadyWaiters())
    }

    /// Makes `state` and the drain's counts visible to `Loop.state` and `Loop.statistics` in the
    /// middle of a batch. Returns the state published before, which the caller releases after
    /// the lock.
    @inlinable
    mutating func publish(_ state: State, reduced: Int, droppedFromCancelledEffects: Int) -> State {
        publication.publish(state, reduced: reduced, droppedFromCancelledEffects: droppedFromCancelledEffects)
    }

    /// The waiters to resume now that the loop has made progress (a drain ended, an effect's
    /// work ended, teardown finished): those waiting for idle if the loop is idle, and every one
    /// waiting for progress.
    @inlinable
    mutating func takeReadyWaiters() -> [CheckedContinuation<Void, Never>] {
        guard waiting.hasWaiters else { return [] }
        return waiting.takeReady(idle: isIdle)
    }
}

// MARK: - The host: where a backend's host task waits for work (see `HostSlot`)

extension LoopStateMachine {
    /// The host waits for its next wake-up, unless mail came since it last looked in its
    /// mailbox; `false` then, and it looks there first.
    @inlinable
    mutating func parkHost(_ continuation: UnsafeContinuation<HostWake<Event>, Never>) -> Bool {
        host.park(continuation)
    }

    /// ``parkHost(_:)`` in the lock of a pass that released the drain role, so that the next
    /// sender takes the role and the host at once. Not while effects are registered: `.run`
    /// effects the pass started wait for the host to start them, and the host then waits among
    /// them (or mail came since it last looked).
    @inlinable
    mutating func parkHostAfterPass(_ continuation: UnsafeContinuation<HostWake<Event>, Never>) -> Bool {
        guard effects.isEmpty else { return false }
        return host.park(continuation)
    }

    /// Something was posted to the host's mailbox: the parked host to wake, if any.
    @inlinable
    mutating func postToHost() -> UnsafeContinuation<HostWake<Event>, Never>? {
        host.post()
    }
}

// MARK: - Effects: the registry of running effects and the books kept as they start and end

extension LoopStateMachine {
    /// A started effect joins the registry, unless its work already ended on another thread.
    /// Returns the entry when it was not kept, for the caller to release after the lock.
    @inlinable
    mutating func register(_ effect: RunningEffect) -> RunningEffect? {
        publication.countStarted()
        return effects.register(effect)
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

    /// An effect's work is over (its task returned, its callback finished or was cancelled): it
    /// leaves the registry, and waiters for idle and stop may go.
    @inlinable
    mutating func workEnded(id: UInt64) -> Followup {
        var followup = Followup()
        followup.released = effects.workEnded(id: id, keeping: Self.keptQueueCapacity)
        wakeWaiters(&followup)
        return followup
    }

    @inlinable
    mutating func wakeWaiters(_ followup: inout Followup) {
        if phase == .tornDown {
            if effects.isEmpty {
                phase.effectsEnded()
                followup.stopped += waiting.releaseStopWaiters()
            } else if let last = effects.onlyOne {
                // Only this effect is left: the waiters that called `stop()` inside it may go.
                followup.stopped += waiting.releaseStopWaiters(runningIn: last)
            }
        }
        followup.idle = takeReadyWaiters()
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
        publication.countSendEffect()
        var dropped: [Event] = []
        for event in events {
            if case .dropped = enqueue(.event(event, handle), external: false) { dropped.append(event) }
        }
        return dropped
    }

    /// A `.send` effect of a loop that propagates `ServiceContext`: its events carry `cause`.
    @inlinable
    mutating func sendEffect(_ events: [Event], cause: EventCause<State>) -> [Event] {
        publication.countSendEffect()
        var dropped: [Event] = []
        for event in events {
            if case .dropped = enqueue(.traced(event, cause), external: false) { dropped.append(event) }
        }
        return dropped
    }

    /// The loop cancelled a running effect: counted, and its registry entry returned so that the
    /// caller can stop it after the lock. A callback effect's work ends with its cancellation; a
    /// task's when it returns.
    @inlinable
    mutating func cancelled(_ handle: EffectHandle) -> (RunningEffect?, Followup) {
        publication.count(.cancelled)
        if handle.isTask { return (effects[handle.id], Followup()) }
        // A callback effect's work ends with its cancellation: its entry leaves the registry now,
        // in one lookup, and goes back to the caller, who stops it and releases it after the lock.
        guard let entry = effects.remove(handle.id, keeping: Self.keptQueueCapacity) else { return (nil, Followup()) }
        var followup = Followup()
        wakeWaiters(&followup)
        return (entry, followup)
    }

    /// A `.run` effect's task returned; `outcome` is how it ended, if it ran to its end (a
    /// cancelled one was counted when it was cancelled).
    @inlinable
    mutating func taskReturned(_ id: UInt64, outcome: EffectLifecycleEvent.Kind?) -> Followup {
        if let outcome { publication.count(outcome) }
        return workEnded(id: id)
    }

    /// An effect finished by itself, with `item` (its last event) as its last word, queued. A
    /// task's work lasts until it returns; a callback effect's ends here.
    @inlinable
    mutating func finished(_ handle: EffectHandle, sending item: QueueItem<State, Event>?) -> (Followup, EnqueueAction) {
        publication.count(.finished)
        let enqueued = item.map { enqueue($0, external: false) } ?? .queued
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

    /// An event for a child feature that no longer exists (see `EffectDoor`).
    @inlinable
    mutating func countOrphaned() {
        publication.countOrphaned()
    }
}

// MARK: - Stop, teardown and the callers that wait for idle or for stop

extension LoopStateMachine {
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
        let (discarded, parked) = intake.close()
        publication.countDropped(.discardedAtStop, discarded.count { $0.isEvent } + parked.count)
        observersAtStop.setAside(joiningIn: discarded)
        if case .drainerTearsDown = begun {
            return .drainerTearsDown(discarded: discarded, parked: parked)
        }
        return .tearDown(discarded: discarded, parked: parked)
    }

    /// Items the drain dequeued but did not handle because stop began: `events` of them were
    /// events, and observers that had not joined yet are set aside to get the final state and
    /// their stop. The caller holds `items` until after the lock (see
    /// ``ObserversAtStop/setAside(joiningIn:)``).
    @inlinable
    mutating func discarded(_ items: some Sequence<QueueItem<State, Event>>, events: Int) {
        if events > 0 { publication.countDropped(.discardedAtStop, events) }
        observersAtStop.setAside(joiningIn: items)
    }

    /// Teardown cancelled every effect: `cancelled` of them were still running; the callback
    /// effects among them (`endedNow`) ended with their cancellation.
    @inlinable
    mutating func tornDown(cancelled: Int, endedNow: [UInt64]) -> Followup {
        phase.tornDown()
        publication.countCancelled(cancelled)
        var followup = Followup()
        for id in endedNow {
            if let entry = effects.remove(id, keeping: Self.keptQueueCapacity) { followup.releasedAtTeardown.append(entry) }
        }
        let lateObservers = observersAtStop.handOver()
        if !lateObservers.isEmpty {
            followup.lateObservers = lateObservers
            followup.finalState = publication.published
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
        if phase == .tornDown, let except = waiter.except, effects.onlyOne == except {
            return .resume
        }
        waiting.addStopWaiter(waiter)
        return .wait
    }

    /// A stop waiter gave up (its bound passed): it leaves the list, if still there.
    @inlinable
    mutating func cancelStopWait(id: UInt64) -> StopWaiter? {
        waiting.cancelStopWait(id: id)
    }

    /// `true` if the loop is idle now; otherwise `waiter` is resumed when it becomes idle.
    @inlinable
    mutating func waitForIdle(_ waiter: CheckedContinuation<Void, Never>) -> Bool {
        if isIdle { return true }
        waiting.add(Waiter(waiter, untilIdle: true))
        return false
    }

    /// `true` if `condition` holds now; otherwise `waiter` is resumed at the loop's next progress
    /// of any kind. The tests' wait for a condition of their own (it is on no send's path).
    @inlinable
    mutating func waitForProgress(_ waiter: CheckedContinuation<Void, Never>, unless condition: (Self) -> Bool) -> Bool {
        if condition(self) { return true }
        waiting.add(Waiter(waiter, untilIdle: false))
        return false
    }
}

extension QueueItem {
    @inlinable
    var isEvent: Bool {
        switch self {
        case .event, .submit, .traced: true
        case .start, .addObserver, .removeObserver: false
        }
    }
}
