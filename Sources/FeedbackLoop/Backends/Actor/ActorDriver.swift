/// The `actor` backend: an actor owns the machine, and `send` never runs the reducer on the
/// caller's thread. `send` appends to the shared queue under the loop's lock and, only when the
/// actor is not already draining, wakes it with one task; the actor then drains everything that
/// has arrived, batch after batch, in one turn. A burst of events therefore costs one lock and one
/// array append each, plus one task per burst. An idle loop parks no task.
@usableFromInline
enum ActorDriver<State: Sendable, Event: Sendable>: LoopDriver {
    case own(LoopActor<State, Event>)
    case executor(ExecutorLoopActor<State, Event>)

    @inlinable
    init(machine: sending Machine<State, Event>, executor: (any SerialExecutor)?) {
        if let executor {
            self = .executor(ExecutorLoopActor(machine: machine, executor: executor))
        } else {
            self = .own(LoopActor(machine: machine))
        }
    }

    @inlinable
    func drain(_ core: LoopCore<State, Event>, event: Event, from handle: EffectHandle?) {
        drain(core, startingWith: .event(event, handle))
    }

    @inlinable
    func drain(_ core: LoopCore<State, Event>, startingWith item: QueueItem<State, Event>) {
        switch self {
        case .own(let actor): Task { await actor.wake(core, first: item) }
        case .executor(let actor): Task { await actor.wake(core, first: item) }
        }
    }

    @inlinable
    func stopBegan(_ core: LoopCore<State, Event>, tearDown: Bool) {
        guard tearDown else { return }
        switch self {
        case .own(let actor): Task { await actor.tearDown(core) }
        case .executor(let actor): Task { await actor.tearDown(core) }
        }
    }

    /// A hop from the caller's task to the actor: no task of its own.
    @inlinable
    func stopBeganInCaller(_ core: LoopCore<State, Event>, tearDown: Bool) async {
        guard tearDown else { return }
        switch self {
        case .own(let actor): await actor.tearDown(core)
        case .executor(let actor): await actor.tearDown(core)
        }
    }
}
