/// An actor that owns a loop's machine (state, reducer, feedbacks, observers), so the compiler,
/// not a convention, keeps every other thread away from the state.
///
/// Two actors share this shape: ``LoopActor`` runs on its own default executor, and
/// ``ExecutorLoopActor`` on a `SerialExecutor` the user gave in ``LoopConfiguration/executor``
/// (an actor that names its executor has no default one, hence two types).
///
/// Everything the actor does is in this protocol's extension: statically dispatched functions
/// isolated to the actor, which a client binary specialises for its `State` and `Event`. Actor
/// methods of a generic actor are called through its vtable from another module, which runs the
/// library's unspecialised code (measured: `swift_getGenericMetadata` ~956 instructions per event).
@usableFromInline
protocol MachineActor<State, Event>: Actor {
    associatedtype State: Sendable
    associatedtype Event: Sendable
    var machine: Machine<State, Event> { get }
}

extension MachineActor {
    /// One wake-up: drains until the queue is empty, then yields once before giving up the drain
    /// role — a sender in full flow refills the queue meanwhile, so one wake-up serves a whole
    /// burst instead of one per event. Under a sustained flow it also yields every
    /// ``LoopCore/turnBudget`` items: the actor runs on the cooperative pool (one thread per
    /// core), and a drain that never gave way would starve every other task there, other loops
    /// included.
    @inlinable
    func wake(_ core: LoopCore<State, Event>, first: QueueItem<State, Event>) async {
        var end = core.drainPass(machine, first: first, releaseWhenEmpty: false, budget: LoopCore<State, Event>.turnBudget)
        var releaseWhenEmpty = false
        while true {
            switch end {
            case .released, .tornDown: return
            case .emptyHeld: releaseWhenEmpty = true
            case .paused: break
            }
            await Task.yield()
            end = core.drainPass(machine, first: nil, releaseWhenEmpty: releaseWhenEmpty, budget: LoopCore<State, Event>.turnBudget)
        }
    }

    @inlinable
    func tearDown(_ core: LoopCore<State, Event>) {
        core.tearDown(machine)
    }
}

/// The `actor` backend's actor on its own default executor.
@usableFromInline
final actor LoopActor<State: Sendable, Event: Sendable>: MachineActor {
    @usableFromInline let machine: Machine<State, Event>

    @inlinable
    init(machine: sending Machine<State, Event>) {
        self.machine = machine
    }
}

/// The `actor` backend's actor on the user's executor (``LoopConfiguration/executor``): every
/// reducer, feedback and observer call runs isolated to that executor.
@usableFromInline
final actor ExecutorLoopActor<State: Sendable, Event: Sendable>: MachineActor {
    @usableFromInline let machine: Machine<State, Event>
    @usableFromInline let executor: any SerialExecutor

    @inlinable
    init(machine: sending Machine<State, Event>, executor: any SerialExecutor) {
        self.machine = machine
        self.executor = executor
    }

    @inlinable
    nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }
}
