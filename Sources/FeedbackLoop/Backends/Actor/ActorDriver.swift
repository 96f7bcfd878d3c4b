import Synchronization

/// The `actor` backend: `send` never runs the reducer on the caller's thread. `send` appends to
/// the shared queue under the loop's lock and, only when the loop is idle, hands it to where it
/// runs, which then drains everything that has arrived, batch after batch:
///
/// - with no executor of its own (the default), to the process's shared workers
///   (``LoopScheduler``): the loop is queued once and a worker drains it, one turn at a time.
///   No task per wake-up and none per idle loop.
/// - with ``LoopConfiguration/executor``, to an actor on that executor (``ExecutorLoopActor``),
///   entered by one task per wake-up.
///
/// A burst of events therefore costs one lock and one array append each, plus one wake-up per
/// burst.
@usableFromInline
enum ActorDriver<State: Sendable, Event: Sendable>: LoopDriver {
    case shared(SharedLoop<State, Event>)
    case executor(ExecutorLoopActor<State, Event>)

    @inlinable
    init(owner: sending StateOwner<State, Event>, executor: (any SerialExecutor)?) {
        if let executor {
            self = .executor(ExecutorLoopActor(owner: owner, executor: executor))
        } else {
            self = .shared(SharedLoop(owner: owner))
        }
    }

    @inlinable
    func drain(_ engine: LoopEngine<State, Event>, event: Event, from handle: EffectHandle?) {
        drain(engine, startingWith: .event(event, handle))
    }

    @inlinable
    func drain(_ engine: LoopEngine<State, Event>, startingWith item: QueueItem<State, Event>) {
        switch self {
        case .shared(let loop):
            // The drain role is ours until the worker's turn takes it over: `engine` and `first`
            // are the role's to write, and the scheduler's lock hands them to the worker.
            loop.engine = engine
            loop.first = item
            loop.hasFirst = true
            loop.releaseWhenEmpty = false
            LoopScheduler.shared.schedule(ReadyLoop(loop: loop) { loop in
                Self.turn(unsafeDowncast(loop, to: SharedLoop<State, Event>.self))
            })
        case .executor(let actor):
            Task { await actor.wake(engine, first: item) }
        }
    }

    /// One turn on a shared worker, in the drain role: at most ``LoopEngine/turnBudget`` items;
    /// `true` if the role is still held and the loop must be queued again.
    @inlinable
    static func turn(_ loop: SharedLoop<State, Event>) -> Bool {
        // Taken out, so that a loop waiting for its next wake-up holds no reference to its
        // engine (the engine holds the loop).
        guard let engine = loop.engine.take() else {
            preconditionFailure("ActorDriver.turn: a loop was queued without its engine")
        }
        if loop.hasFirst {
            loop.hasFirst = false
            // Moved out, the placeholder left behind holding nothing. Handled here as
            // `drainPass` handles its `first`, rather than handed to it: a `QueueItem?` is
            // destroyed through the run-time's value witnesses (~300 instructions per wake-up).
            var first = QueueItem<State, Event>.removeObserver(0)
            swap(&first, &loop.first)
            if case .start = first {
                loop.owner.process(first, engine: engine)
            } else if engine.stopRequested.load(ordering: .relaxed) {
                engine.discard(CollectionOfOne(first))
            } else {
                loop.owner.process(first, engine: engine)
            }
        }
        let end = engine.drainPass(
            loop.owner, first: nil, releaseWhenEmpty: loop.releaseWhenEmpty, budget: LoopEngine<State, Event>.turnBudget)
        // After a pass that released the role, `loop` is no longer ours: another sender may be
        // writing `first` already.
        guard case .held(let releaseWhenEmpty) = end else { return false }
        loop.engine = engine
        loop.releaseWhenEmpty = releaseWhenEmpty
        return true
    }

    @inlinable
    func stopBegan(_ engine: LoopEngine<State, Event>, tearDown: Bool) {
        guard tearDown else { return }
        switch self {
        case .shared(let loop):
            loop.engine = engine
            LoopScheduler.shared.schedule(ReadyLoop(loop: loop) { loop in
                let loop = unsafeDowncast(loop, to: SharedLoop<State, Event>.self)
                guard let engine = loop.engine.take() else {
                    preconditionFailure("ActorDriver.stopBegan: a loop was queued without its engine")
                }
                engine.tearDown(loop.owner)
                return false
            })
        case .executor(let actor):
            Task { await actor.tearDown(engine) }
        }
    }

    /// On the shared workers, the caller tears down in place: it holds the drain role, and the
    /// loop was idle, so no worker has it. On the user's executor, a hop to the actor.
    @inlinable
    @inline(__always)
    func stopBeganInCaller(_ engine: LoopEngine<State, Event>, tearDown: Bool) async {
        guard tearDown else { return }
        switch self {
        case .shared(let loop): engine.tearDown(loop.owner)
        case .executor(let actor): await actor.tearDown(engine)
        }
    }
}

/// A loop on the shared workers (``LoopScheduler``): the state's owner and what the caller that
/// took the drain role hands to the worker's turn.
@usableFromInline
final class SharedLoop<State: Sendable, Event: Sendable>: @unchecked Sendable {
    // @unchecked: every field but `owner` is touched only by the holder of the drain role (the
    // caller that took it, then the worker whose turn it is). The role is taken and released
    // under `LoopEngine.lock`, and handed to a worker under the scheduler's lock, which order
    // every access between threads.
    @usableFromInline let owner: StateOwner<State, Event>
    /// The loop's engine while the loop is queued or in a turn, `nil` while it is idle: the
    /// queue holds the loop, and the loop its engine, alive until the turn.
    @exclusivity(unchecked) @usableFromInline var engine: LoopEngine<State, Event>?
    /// The item the role was taken with, for the next turn to handle first, when `hasFirst`;
    /// otherwise a placeholder that holds nothing (not an optional: see ``ActorDriver/turn(_:)``).
    /// `@exclusivity(unchecked)`, as the other fields: the drain role already makes every access
    /// exclusive, and the run-time check cost a few hundred instructions per wake-up.
    @exclusivity(unchecked) @usableFromInline var first: QueueItem<State, Event> = .removeObserver(0)
    @exclusivity(unchecked) @usableFromInline var hasFirst = false
    /// The next turn's `releaseWhenEmpty` (see ``LoopEngine/drainPass(_:first:releaseWhenEmpty:budget:)``).
    @exclusivity(unchecked) @usableFromInline var releaseWhenEmpty = false

    @inlinable
    init(owner: sending StateOwner<State, Event>) {
        self.owner = owner
    }
}
