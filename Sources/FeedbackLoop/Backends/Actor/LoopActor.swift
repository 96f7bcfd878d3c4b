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
        let end = engine.drainPass(owner, event: event, from: handle, budget: LoopEngine<State, Event>.turnBudget)
        guard end.holdsRole else { return }
        _ = await engine.continueTurns(owner, after: end) { true }
    }

    @inlinable
    func tearDown(_ engine: LoopEngine<State, Event>) {
        engine.tearDown(owner)
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
