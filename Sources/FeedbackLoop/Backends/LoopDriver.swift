/// The seam between the engine every backend shares and each backend's own scheduling.
///
/// Shared (`Engine/`): the lock-guarded ``CoreState`` (queue, drain role, registry of running
/// effects, stop, idle, statistics), the ``Machine`` (state, reducer, feedback reactors,
/// observers) and ``LoopCore``, which takes events in and keeps the books. A backend provides only
/// *where and when the machine runs*: what happens once a caller has won the drain role, how
/// and teardown reaches the machine. Each backend's answer lives in its own folder
/// (`Backends/Callback/`, `Backends/Actor/`, `Backends/Stream/`), behind this protocol.
///
/// Dispatch goes through the ``Driver`` enum rather than an existential: a `switch` over concrete
/// driver types lets a client binary specialise every backend's drain for its own `State` and
/// `Event`, where a witness-table call would run the library's unspecialised generic code
/// (measured: ~956 instructions of metadata lookups per event).
@usableFromInline
protocol LoopDriver<State, Event>: Sendable {
    associatedtype State: Sendable
    associatedtype Event: Sendable

    /// The caller has just won the drain role with `item` (see ``CoreState/enqueue(_:external:)``):
    /// run the machine, starting with `item`, until the queue is empty or stop begins. The role
    /// must be released (or teardown performed) by the code this starts, exactly once.
    func drain(_ core: LoopCore<State, Event>, startingWith item: QueueItem<State, Event>)

    /// The caller holds the drain role after stop began: finish the machine where it lives
    /// (``LoopCore/tearDown(_:)``).
    func tearDown(_ core: LoopCore<State, Event>)

    /// ``tearDown(_:)`` for a caller that is a task and waits for the stop anyway: no new task.
    func tearDownInCaller(_ core: LoopCore<State, Event>) async
}

/// The backend a loop was made with, as a closed set of concrete drivers (see ``LoopDriver``).
@usableFromInline
enum Driver<State: Sendable, Event: Sendable>: Sendable {
    case callback(CallbackDriver<State, Event>)
    case actor(ActorDriver<State, Event>)
    case stream(StreamDriver<State, Event>)

    @inlinable
    init(_ backend: Backend, machine: sending Machine<State, Event>, configuration: LoopConfiguration) {
        switch backend {
        case .callback: self = .callback(CallbackDriver(machine: machine))
        case .actor: self = .actor(ActorDriver(machine: machine, executor: configuration.executor))
        case .stream: self = .stream(StreamDriver(machine: machine))
        }
    }

    @inlinable
    func drain(_ core: LoopCore<State, Event>, startingWith item: QueueItem<State, Event>) {
        switch self {
        case .callback(let driver): driver.drain(core, startingWith: item)
        case .actor(let driver): driver.drain(core, startingWith: item)
        case .stream(let driver): driver.drain(core, startingWith: item)
        }
    }

    /// The caller has just won the drain role with an event in hand (``CoreState/send(_:from:)``):
    /// `callback` reduces it in place; the others wake their drain with it as the first item.
    @inlinable
    func drain(_ core: LoopCore<State, Event>, event: Event, from handle: EffectHandle?) {
        switch self {
        case .callback(let driver): core.drainInPlace(driver.machine, event: event, from: handle)
        case .actor(let driver): driver.drain(core, startingWith: .event(event, handle))
        case .stream(let driver): driver.drain(core, startingWith: .event(event, handle))
        }
    }

    @inlinable
    func tearDown(_ core: LoopCore<State, Event>) {
        switch self {
        case .callback(let driver): driver.tearDown(core)
        case .actor(let driver): driver.tearDown(core)
        case .stream(let driver): driver.tearDown(core)
        }
    }

    @inlinable
    func tearDownInCaller(_ core: LoopCore<State, Event>) async {
        switch self {
        case .callback(let driver): await driver.tearDownInCaller(core)
        case .actor(let driver): await driver.tearDownInCaller(core)
        case .stream(let driver): await driver.tearDownInCaller(core)
        }
    }

    /// The capacity of the machine's spare queue buffer, for tests that check a burst's peak is
    /// given back. Read where the machine lives: on the actor, or under the lock while no one
    /// holds the drain role.
    func spareCapacity(_ core: LoopCore<State, Event>) async -> Int {
        switch self {
        case .callback(let driver): core.lock.withLock { _ in driver.machine.spare.capacity }
        case .actor(.own(let actor)): await actor.spareCapacity()
        case .actor(.executor(let actor)): await actor.spareCapacity()
        case .stream(let driver): core.lock.withLock { _ in driver.machine.spare.capacity }
        }
    }

    // The `stream` backend's host (see ``StreamDriver``): the other backends run the machine
    // wherever the drain role is taken and have nothing to start or host.

    /// The loop was just made.
    @inlinable
    func start(_ core: LoopCore<State, Event>, hosting: LoopHosting) {
        if case .stream(let driver) = self { driver.start(core, hosting: hosting) }
    }

    /// Stop began; a loop nobody hosted yet gets a host to tear it down.
    @inlinable
    func stopBegan(_ core: LoopCore<State, Event>) {
        if case .stream(let driver) = self { driver.stopBegan(core) }
    }

    /// ``stopBegan(_:)`` for a caller that waits for the stop anyway.
    @inlinable
    func stopBeganInCaller(_ core: LoopCore<State, Event>) async {
        if case .stream(let driver) = self { await driver.stopBeganInCaller(core) }
    }
}
