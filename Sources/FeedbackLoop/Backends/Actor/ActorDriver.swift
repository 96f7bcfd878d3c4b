/// The `actor` backend: an actor holds the state's owner, and `send` never runs the reducer on the
/// caller's thread. `send` appends to the shared queue under the loop's lock and, only when the
/// actor is not already draining, wakes it with one task; the actor then drains everything that
/// has arrived, batch after batch, in one turn. A burst of events therefore costs one lock and one
/// array append each, plus one task per burst. An idle loop parks no task.
@usableFromInline
enum ActorDriver<State: Sendable, Event: Sendable>: LoopDriver {
    case own(LoopActor<State, Event>)
    case executor(ExecutorLoopActor<State, Event>)

    @inlinable
    init(owner: sending StateOwner<State, Event>, executor: (any SerialExecutor)?) {
        if let executor {
            self = .executor(ExecutorLoopActor(owner: owner, executor: executor))
        } else {
            self = .own(LoopActor(owner: owner))
        }
    }

    /// The task carries the event itself, not a queue item (see
    /// ``LoopEngine/drainPass(_:event:from:budget:)``).
    @inlinable
    func drain(_ engine: LoopEngine<State, Event>, event: Event, from handle: EffectHandle?) {
        switch self {
        case .own(let actor): Task { await actor.wake(engine, event: event, from: handle) }
        case .executor(let actor): Task { await actor.wake(engine, event: event, from: handle) }
        }
    }

    /// The initial state (`.start`, queued by `Loop.init`) reaches a loop on its own executor
    /// on the caller's thread, with no task: a task per loop made creating one cost more than
    /// its whole life otherwise, and its memory stayed resident after it ended (the `loops`
    /// scenario measures both). A loop on the user's executor gets it there, in a task.
    @inlinable
    func drain(_ engine: LoopEngine<State, Event>, startingWith item: QueueItem<State, Event>) {
        switch self {
        case .own(let actor):
            if case .start = item {
                actor.startHere(engine)
            } else {
                Task { await actor.wake(engine, first: item) }
            }
        case .executor(let actor): Task { await actor.wake(engine, first: item) }
        }
    }

    @inlinable
    func stopBegan(_ engine: LoopEngine<State, Event>, tearDown: Bool) {
        guard tearDown else { return }
        switch self {
        case .own(let actor): Task { await actor.tearDown(engine) }
        case .executor(let actor): Task { await actor.tearDown(engine) }
        }
    }

    /// A hop from the caller's task to the actor: no task of its own.
    @inlinable
    @inline(__always)
    func stopBeganInCaller(_ engine: LoopEngine<State, Event>, tearDown: Bool) async {
        guard tearDown else { return }
        switch self {
        case .own(let actor): await actor.tearDown(engine)
        case .executor(let actor): await actor.tearDown(engine)
        }
    }
}
