/// The seam between the engine every backend shares and each backend's own scheduling.
///
/// Shared (`Engine/`): the lock-guarded ``LoopStateMachine`` (queue, drain role, registry of running
/// effects, stop, idle, statistics), the ``StateOwner`` (state, reducer, feedback reactors,
/// observers) and ``LoopEngine``, which takes events in and keeps the books. A backend decides only
/// *where and when the state's owner runs*: what happens once a caller has won the drain role, where
/// teardown reaches the state's owner, and where a `.run` effect's task lives. Each backend's answer is
/// in its own folder (`Backends/Callback/`, `Backends/Actor/`, `Backends/Stream/`), behind this
/// protocol, and the engine calls nothing of a backend but these requirements. A backend in turn
/// calls only the engine's drain turn (``LoopEngine/drainPass(_:first:releaseWhenEmpty:budget:)``,
/// ``LoopEngine/reduceInPlace(_:event:from:)``, ``LoopEngine/tearDown(_:)``), its stop transition
/// and the end of an effect's task.
///
/// Dispatch goes through the ``Driver`` enum rather than an existential: a `switch` over concrete
/// driver types lets a client binary specialise every backend's drain for its own `State` and
/// `Event`, where a witness-table call would run the library's unspecialised generic code:
/// metadata lookups on every event (W1, built outside the package as `scripts/callgrind.sh`
/// does, measures it).
@usableFromInline
protocol LoopDriver<State, Event>: Sendable {
    associatedtype State: Sendable
    associatedtype Event: Sendable

    /// The loop was just made and its `.start` item is about to be queued.
    func start(_ engine: LoopEngine<State, Event>, hosting: LoopHosting)

    /// The caller has just won the drain role with `event` in hand, not queued (see
    /// ``LoopStateMachine/send(_:from:)``): reduce it first, then drain. The role must be released (or
    /// teardown performed) by the code this starts, exactly once.
    func drain(_ engine: LoopEngine<State, Event>, event: Event, from handle: EffectHandle?)

    /// The caller has just won the drain role with `item` (see ``LoopStateMachine/enqueue(_:external:)``):
    /// run the state's owner, starting with `item`, until the queue is empty or stop begins. The role
    /// must be released (or teardown performed) by the code this starts, exactly once.
    func drain(_ engine: LoopEngine<State, Event>, startingWith item: QueueItem<State, Event>)

    /// Stop has begun. With `tearDown`, the caller holds the drain role and the state's owner must be
    /// torn down where it lives (``LoopEngine/tearDown(_:)``).
    func stopBegan(_ engine: LoopEngine<State, Event>, tearDown: Bool)

    /// ``stopBegan(_:tearDown:)`` for a caller that is a task and waits for the stop anyway: it
    /// does the work itself rather than start a task for it.
    func stopBeganInCaller(_ engine: LoopEngine<State, Event>, tearDown: Bool) async

    /// ``Loop/run()``'s caller offers its task to host the loop; returns once the loop no longer
    /// needs it. A backend with nothing to host returns at once.
    func host(_ engine: LoopEngine<State, Event>, forRun hosting: LoopHosting) async

    /// Starts a `.run` effect's task, which runs `body` with `sink` inside `marker` and reports
    /// its end to ``LoopEngine/taskReturned(_:error:)``; returns how the loop stops it.
    func startTask(
        _ engine: LoopEngine<State, Event>, handle: EffectHandle, priority: UInt8?,
        body: @escaping @Sendable (Sink<Event>) async throws -> Void, sink: Sink<Event>, marker: EffectMarker
    ) -> EffectStopper
}

extension LoopDriver {
    // A backend with no host of its own (`callback`, `actor`) runs the state's owner wherever the drain
    // role is taken: nothing to start, and nothing to host for `run()`.

    @inlinable
    func start(_ engine: LoopEngine<State, Event>, hosting: LoopHosting) {}

    @inlinable
    func host(_ engine: LoopEngine<State, Event>, forRun hosting: LoopHosting) async {}

    /// An unstructured task per effect. `Task.immediate` (SE-0472), to run it on the actor up to
    /// its first suspension, was measured on the actor backend and cost more (W3 churn with a
    /// `.run` effect). A closure literal, not a closure handed in: converting a function value to
    /// `Task`'s `@isolated(any)` operation allocates a thunk, two mallocs per effect.
    @inlinable
    func startTask(
        _ engine: LoopEngine<State, Event>, handle: EffectHandle, priority: UInt8?,
        body: @escaping @Sendable (Sink<Event>) async throws -> Void, sink: Sink<Event>, marker: EffectMarker
    ) -> EffectStopper {
        .task(
            Task(priority: priority.map(TaskPriority.init(rawValue:))) {
                do {
                    try await EffectMarker.inside(marker) { try await body(sink) }
                    engine.taskReturned(handle, error: nil)
                } catch {
                    engine.taskReturned(handle, error: error)
                }
            })
    }
}

/// The backend a loop was made with, as a closed set of concrete drivers (see ``LoopDriver``).
@usableFromInline
enum Driver<State: Sendable, Event: Sendable>: LoopDriver {
    case callback(CallbackDriver<State, Event>)
    case actor(ActorDriver<State, Event>)
    case stream(StreamDriver<State, Event>)

    @inlinable
    init(_ backend: Backend, owner: sending StateOwner<State, Event>, configuration: LoopConfiguration) {
        switch backend {
        case .callback: self = .callback(CallbackDriver(owner: owner))
        case .actor: self = .actor(ActorDriver(owner: owner, executor: configuration.executor))
        case .stream: self = .stream(StreamDriver(owner: owner))
        }
    }

    @inlinable
    var backend: Backend {
        switch self {
        case .callback: .callback
        case .actor: .actor
        case .stream: .stream
        }
    }

    @inlinable
    func start(_ engine: LoopEngine<State, Event>, hosting: LoopHosting) {
        switch self {
        case .callback(let driver): driver.start(engine, hosting: hosting)
        case .actor(let driver): driver.start(engine, hosting: hosting)
        case .stream(let driver): driver.start(engine, hosting: hosting)
        }
    }

    @inlinable
    func drain(_ engine: LoopEngine<State, Event>, event: Event, from handle: EffectHandle?) {
        switch self {
        case .callback(let driver): driver.drain(engine, event: event, from: handle)
        case .actor(let driver): driver.drain(engine, event: event, from: handle)
        case .stream(let driver): driver.drain(engine, event: event, from: handle)
        }
    }

    @inlinable
    func drain(_ engine: LoopEngine<State, Event>, startingWith item: QueueItem<State, Event>) {
        switch self {
        case .callback(let driver): driver.drain(engine, startingWith: item)
        case .actor(let driver): driver.drain(engine, startingWith: item)
        case .stream(let driver): driver.drain(engine, startingWith: item)
        }
    }

    @inlinable
    func stopBegan(_ engine: LoopEngine<State, Event>, tearDown: Bool) {
        switch self {
        case .callback(let driver): driver.stopBegan(engine, tearDown: tearDown)
        case .actor(let driver): driver.stopBegan(engine, tearDown: tearDown)
        case .stream(let driver): driver.stopBegan(engine, tearDown: tearDown)
        }
    }

    /// Always inlined: as a call of its own, an async function that `callback` needed only to
    /// run synchronous work in cost every stop an async frame and an executor switch (the
    /// `loops` workload measures it).
    @inlinable
    @inline(__always)
    func stopBeganInCaller(_ engine: LoopEngine<State, Event>, tearDown: Bool) async {
        switch self {
        case .callback(let driver): await driver.stopBeganInCaller(engine, tearDown: tearDown)
        case .actor(let driver): await driver.stopBeganInCaller(engine, tearDown: tearDown)
        case .stream(let driver): await driver.stopBeganInCaller(engine, tearDown: tearDown)
        }
    }

    @inlinable
    func host(_ engine: LoopEngine<State, Event>, forRun hosting: LoopHosting) async {
        switch self {
        case .callback(let driver): await driver.host(engine, forRun: hosting)
        case .actor(let driver): await driver.host(engine, forRun: hosting)
        case .stream(let driver): await driver.host(engine, forRun: hosting)
        }
    }

    /// Never inlined: inlined, every backend's way to start a task made ``LoopEngine/start(_:feedback:life:)``
    /// large enough to slow its other cases (W2's `.send` effects).
    @inlinable
    @inline(never)
    func startTask(
        _ engine: LoopEngine<State, Event>, handle: EffectHandle, priority: UInt8?,
        body: @escaping @Sendable (Sink<Event>) async throws -> Void, sink: Sink<Event>, marker: EffectMarker
    ) -> EffectStopper {
        switch self {
        case .callback(let driver):
            driver.startTask(engine, handle: handle, priority: priority, body: body, sink: sink, marker: marker)
        case .actor(let driver):
            driver.startTask(engine, handle: handle, priority: priority, body: body, sink: sink, marker: marker)
        case .stream(let driver):
            driver.startTask(engine, handle: handle, priority: priority, body: body, sink: sink, marker: marker)
        }
    }
}
