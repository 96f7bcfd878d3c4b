/// An actor that owns a loop's state (state, reducer, feedbacks, observers), so the compiler,
/// not a convention, keeps every other thread away from the state.
///
/// Two actors share this shape: ``LoopActor`` runs on its own default executor, and
/// ``ExecutorLoopActor`` on a `SerialExecutor` the user gave in ``LoopConfiguration/executor``
/// (an actor that names its executor has no default one, hence two types).
///
/// Everything the actor does is in this protocol's extension: statically dispatched functions
/// isolated to the actor, which a client binary specialises for its `State` and `Event`. Actor
/// methods of a generic actor are called through its vtable from another module, which runs the
/// library's unspecialised code (`swift_getGenericMetadata` on every event: W1 on `actor`, built
/// outside the package as `scripts/callgrind.sh` does, measures it).
@usableFromInline
protocol OwnerActor<State, Event>: Actor {
    associatedtype State: Sendable
    associatedtype Event: Sendable
    var owner: StateOwner<State, Event> { get }
}

extension OwnerActor {
    /// One wake-up: a turn of drain passes on the actor (see
    /// ``LoopEngine/drainTurns(_:first:releaseWhenEmpty:between:)``).
    @inlinable
    func wake(_ engine: LoopEngine<State, Event>, first: QueueItem<State, Event>) async {
        _ = await engine.drainTurns(owner, first: first, releaseWhenEmpty: false) { true }
    }

    /// A wake-up by one event, the common one: its first pass runs here, and the turn goes on
    /// only if that pass kept the role (see ``LoopEngine/continueTurns(_:after:between:)``).
    /// Always inlined into the waking task's body: as a call of its own it costs the task a
    /// second async frame per wake-up (the `service` workload measures it).
    @inlinable
    @inline(__always)
    func wake(_ engine: LoopEngine<State, Event>, event: Event, from handle: EffectHandle?) async {
        let end = pass(engine, event: event, from: handle)
        guard end.holdsRole else { return }
        _ = await engine.continueTurns(owner, after: end) { true }
    }

    /// The first pass of a wake-up by one event. Synchronous and out of line: inlined into the
    /// waking task's body, its locals took an allocation of the task's allocator on every
    /// wake-up (the `service` workload measures it).
    @inlinable
    @inline(never)
    func pass(_ engine: LoopEngine<State, Event>, event: Event, from handle: EffectHandle?) -> DrainEnd {
        engine.drainPass(owner, event: event, from: handle, budget: LoopEngine<State, Event>.turnBudget)
    }

    @inlinable
    func tearDown(_ engine: LoopEngine<State, Event>) {
        engine.tearDown(owner)
    }

    /// The rest of a turn whose first pass ran outside a task and kept the role.
    @inlinable
    func goOn(_ engine: LoopEngine<State, Event>, after end: DrainEnd) async {
        _ = await engine.continueTurns(owner, after: end) { true }
    }
}

/// The `actor` backend's actor on its own default executor.
@usableFromInline
final actor LoopActor<State: Sendable, Event: Sendable>: OwnerActor {
    @usableFromInline let owner: StateOwner<State, Event>

    @inlinable
    init(owner: sending StateOwner<State, Event>) {
        self.owner = owner
    }

    /// The loop's first pass, from `Loop.init`, on its caller's thread: the feedbacks see the
    /// initial state there, and whatever they queued meanwhile waits for a task on the actor, as
    /// after any pause. Only `Loop.init`'s caller knows the loop yet and it holds the drain role,
    /// so nothing else runs on this actor meanwhile (everything else that would enqueues and
    /// finds the role taken); the owner, which the role guards, is touched by nobody else.
    @inlinable
    nonisolated func startHere(_ engine: LoopEngine<State, Event>) {
        // Called as the plain function it is: no other job can be on this actor (above).
        typealias Isolated = (isolated LoopActor, LoopEngine<State, Event>) -> Void
        typealias Plain = (LoopActor, LoopEngine<State, Event>) -> Void
        let start: Isolated = { actor, engine in actor.start(engine) }
        unsafeBitCast(start, to: Plain.self)(self, engine)
    }

    @inlinable
    func start(_ engine: LoopEngine<State, Event>) {
        let end = engine.drainPass(owner, first: .start, releaseWhenEmpty: true, budget: 0)
        guard end.holdsRole else { return }
        Task { await self.goOn(engine, after: end) }
    }
}

/// The `actor` backend's actor on the user's executor (``LoopConfiguration/executor``): every
/// reducer, feedback and observer call runs isolated to that executor.
@usableFromInline
final actor ExecutorLoopActor<State: Sendable, Event: Sendable>: OwnerActor {
    @usableFromInline let owner: StateOwner<State, Event>
    @usableFromInline let executor: any SerialExecutor

    @inlinable
    init(owner: sending StateOwner<State, Event>, executor: any SerialExecutor) {
        self.owner = owner
        self.executor = executor
    }

    @inlinable
    nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }
}

extension ExecutorLoopActor {
    /// Whether `caller` runs on this actor's executor: then code isolated to it already runs
    /// where the loop's reducer runs (see ``Loop/send(_:isolation:)``). Compared by identity:
    /// an executor that needs its own equality check (`complexEquality`) is taken as another one,
    /// which only costs its callers the hop every other caller makes.
    @inlinable
    nonisolated func sharesExecutor(with caller: any Actor) -> Bool {
        guard let callers = caller.unownedExecutor.asSerialExecutor() else { return false }
        return callers === executor
    }

    /// ``Loop/send(_:isolation:)`` from a caller on this actor's executor: a loop found idle
    /// reduces the event here, on the caller's turn of the executor, as `callback` reduces on the
    /// sender's thread, with no task and no hop. A loop that is draining (the call comes from its
    /// own observer or effect, or from another thread's wake-up) queues it, as for any caller.
    @inlinable
    nonisolated func receive(_ event: Event, engine: LoopEngine<State, Event>) {
        // A loop that propagates `ServiceContext` keeps its one path for every event.
        guard engine.cause == nil else { return engine.receive(event, from: nil) }
        let action = engine.lock.withLock { $0.send(event, from: nil) }
        switch action {
        case .reduce:
            // The caller runs on this actor's executor (``sharesExecutor(with:)``), so this actor's
            // isolation holds. `assumeIsolated` would check it again at run time, and its closure
            // costs two allocations per event (the `service-executor` workload measures it); a
            // closure that captures nothing, called as the plain function it is, costs neither.
            typealias Isolated = (isolated ExecutorLoopActor, LoopEngine<State, Event>, Event) -> Void
            typealias Plain = (ExecutorLoopActor, LoopEngine<State, Event>, Event) -> Void
            let reduce: Isolated = { actor, engine, event in actor.reduceHere(engine, event: event) }
            unsafeBitCast(reduce, to: Plain.self)(self, engine, event)
        case .queued:
            return
        case .dropped(let reason, let firstWarning):
            engine.reportDrop(event, reason: reason, firstWarning: firstWarning)
        }
    }

    /// One pass of at most a turn's budget, releasing the role once the queue is empty: the
    /// executor is the caller's (an event loop, say), which a sender on another thread must not
    /// hold for longer than a wake-up would. What is left waits for a task, as after any pause.
    @inlinable
    func reduceHere(_ engine: LoopEngine<State, Event>, event: Event) {
        let end = engine.drainPass(
            owner, event: event, from: nil, releaseWhenEmpty: true, budget: LoopEngine<State, Event>.turnBudget)
        guard end.holdsRole else { return }
        Task { await self.goOn(engine, after: end) }
    }

}
