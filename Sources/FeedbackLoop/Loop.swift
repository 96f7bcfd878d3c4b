/// A unidirectional state owner: one state, changed only by a pure reducer in response to
/// events, with feedbacks that run effects while the state asks for them.
///
/// ```swift
/// let loop = Loop(
///     initial: Counter.State(),
///     reduce: Counter.reduce,
///     feedbacks: [
///         .whenBecomesTrue({ $0.isTicking }) { _ in
///             .run { send in
///                 while true {
///                     try await Task.sleep(for: .seconds(1))
///                     send(.tick)
///                 }
///             }
///         },
///     ],
///     backend: .actor
/// )
/// loop.send(.start)
/// for await state in loop.states { print(state.count) }
/// ```
///
/// ## Ordering
/// Events are reduced one at a time, in the order their ``send(_:)`` calls returned (so each
/// sender's events keep their order). Every state the reducer produces reaches every feedback,
/// then every observer, in order; none is skipped. Events sent from inside the loop — by an
/// observer, a feedback, an effect starting, an event source attaching — join the back of the
/// queue; the reducer is never re-entered and the stack never grows with a chain of events.
///
/// ## Threading
/// A loop is `Sendable`: send from any thread or task. With ``Backend/callback`` the reducer,
/// feedbacks and observers run on whichever thread holds the drain role (the sender that found
/// the loop idle drains the queue before its `send` returns); with ``Backend/actor`` they run on
/// the loop's actor, and with ``Backend/stream`` in its host task (see ``LoopHosting``), and
/// `send` only enqueues. On every backend they never run concurrently with each other.
///
/// ## Cancellation and lifetime
/// A feedback decides when its effects are cancelled: ``Feedback/skippingRepeated(_:effects:)``
/// and its kin cancel an effect when its query changes or goes away; effects of
/// ``Feedback/custom(_:)`` and ``Feedback/events(_:)`` run until they end by themselves. Every
/// effect is cancelled when the loop stops. Once cancelled, an effect can no longer change state:
/// its events are dropped and counted. ``stop()`` returns only when every effect has ended — an
/// effect that ignores cancellation holds it; ``stop(timeout:clock:)`` bounds the wait and reports
/// who held it. Releasing the last reference to a running loop stops it the same way without
/// waiting, and cancelling a task that is inside ``run()`` stops it too.
///
/// ## Calling the loop from its own effects
/// An effect may call ``send(_:)`` and ``sendAndWait(_:)``. ``stop()`` and ``run()`` called
/// from inside a `.run` effect's task (or a task it created) begin the stop as usual and return
/// once every *other* effect has ended, rather than waiting for the calling effect, which cannot
/// end while it waits. ``waitUntilIdle()`` from inside an effect is a programming error (the loop
/// is never idle while the caller runs): it logs an error and returns at once, never hangs.
public final class Loop<State: Sendable, Event: Sendable>: Sendable {
    @usableFromInline let engine: LoopEngine<State, Event>

    /// The backend running this loop.
    ///
    /// Read from the engine's driver, which already knows it: the façade keeps one word past its
    /// header, which is what 100,000 idle loops pay for it.
    @inlinable
    public var backend: Backend { engine.driver.backend }

    /// Creates a loop and starts it: every feedback sees `initial` at once and starts its
    /// effects.
    ///
    /// - Parameters:
    ///   - initial: The first state.
    ///   - reduce: The only place state changes. It must be pure and fast: it runs on the drain
    ///     thread or the loop's actor, and everything else waits for it.
    ///   - feedbacks: The rules that start and cancel effects; see ``Feedback``.
    ///   - backend: The engine; see ``Backend``.
    ///   - configuration: Capacity, logging and the effect-error hook.
    ///   - instrumentation: Hooks that see each transition, effect and dropped event.
    // Inlinable so that the engine — above all the actor's drain, whose first wake-up starts
    // here — is specialised in the caller's binary for its `State` and `Event`; built inside the
    // library it would run generic code with run-time metadata lookups on every event.
    @inlinable
    public init(
        initial: State,
        reduce: @escaping @Sendable (inout State, Event) -> Void,
        feedbacks: [Feedback<State, Event>] = [],
        backend: Backend = .callback,
        configuration: LoopConfiguration = LoopConfiguration(),
        instrumentation: LoopInstrumentation<State, Event>? = nil
    ) {
        let (configuration, instrumentation) = Self.prepare(configuration, instrumentation, feedbacks: feedbacks)
        self.engine = LoopEngine(
            initial: initial,
            reduce: reduce,
            feedbacks: feedbacks,
            backend: backend,
            configuration: configuration,
            instrumentation: instrumentation)
        engine.start()
    }

    /// The configuration labelled with the feedbacks' labels, and the instrumentation of the
    /// caller and of every instrument it names, combined.
    ///
    /// Inlinable, with the common case (no label, no hook, no instrument, a logger above `debug`)
    /// decided here: the library's generic code behind it looks up run-time metadata for these
    /// types, on every loop a server making a loop per request makes (the `loops` workload).
    @inlinable
    static func prepare(
        _ configuration: LoopConfiguration,
        _ instrumentation: LoopInstrumentation<State, Event>?,
        feedbacks: [Feedback<State, Event>]
    ) -> (LoopConfiguration, LoopInstrumentation<State, Event>?) {
        let labelled = feedbacks.contains { $0.label != nil }
        if !labelled, instrumentation == nil, !configuration.isInstrumented { return (configuration, nil) }
        return (configuration.labelling(feedbacks), configuration.instrumentation(adding: instrumentation, feedbacks: feedbacks))
    }

    deinit {
        // A loop stopped before its release has nothing left to begin. A deinit of a generic class
        // runs the library's unspecialised code, where `beginStop()` found `alreadyStopping` only
        // after run-time metadata lookups (the `loops` workload counts them). Whoever began the stop held this
        // loop, so the release of the last reference orders their store before this load.
        if !engine.stopRequested.load(ordering: .relaxed) {
            engine.beginStop()
        }
    }

    /// Sends an event into the loop. Returns at once and never waits for effects.
    ///
    /// With ``Backend/callback``, if no other thread is draining, the event (and anything queued
    /// meanwhile) is reduced before `send` returns; otherwise it is queued for the thread that is.
    /// With ``Backend/actor`` and ``Backend/stream`` the event is queued and the loop's actor or
    /// host task woken if needed.
    ///
    /// After ``stop()`` began the event is dropped, counted in
    /// ``LoopStatistics/eventsDroppedAfterStop`` and logged the first time; it never traps. A full
    /// ``EventCapacity/bounded(_:)`` queue drops it the same way
    /// (``LoopStatistics/eventsDroppedOverCapacity``).
    ///
    /// A call written `loop.send(event)` is ``send(_:isolation:)``, which does the same for every
    /// caller but one on the loop's executor; this one remains for `loop.send` as a function value.
    @inlinable
    @_disfavoredOverload
    public func send(_ event: Event) {
        engine.receive(event, from: nil)
    }

    /// Sends an event into the loop, as ``send(_:)`` does; called by every `loop.send(event)`.
    ///
    /// A caller isolated to an actor that runs on the executor of an ``Backend/actor`` loop made
    /// with ``LoopConfiguration/executor`` (an actor on the same SwiftNIO event loop, say) is
    /// already where that loop's reducer runs: when the loop is idle, its event is reduced right
    /// there, before `send` returns, with no task and no hop, as ``Backend/callback`` reduces on
    /// the sender's thread; the reducer, feedbacks and observers then run inside this call. Events
    /// sent before it are reduced first, and while the loop is draining (a call from its own
    /// observer or effect, say) the event is queued as any other. For every other caller, and on
    /// every other backend, it is ``send(_:)``.
    ///
    /// - Parameters:
    ///   - event: The event to reduce.
    ///   - isolation: The caller's actor, which Swift passes for you (`#isolation`).
    @inlinable
    public func send(_ event: Event, isolation: isolated (any Actor)? = #isolation) {
        if let isolation, case .actor(.executor(let actor)) = engine.driver, actor.sharesExecutor(with: isolation) {
            actor.receive(event, engine: engine)
            return
        }
        engine.receive(event, from: nil)
    }

    /// Sends a batch of events into the loop, as one call of ``send(_:)`` per event would, but
    /// with one lock round trip and at most one wake-up. Returns at once and never waits for
    /// effects.
    ///
    /// The events are queued in order and contiguously: no other sender's event, and no event
    /// an effect sends meanwhile, lands between them. The loop is woken at most once for the
    /// whole batch (a task on ``Backend/actor``, a resumed host on ``Backend/stream``), where a
    /// `send` per event may wake an idle loop for each. With ``Backend/callback``, if no other
    /// thread is draining, they are reduced in place before this call returns, as `send` does.
    ///
    /// After ``stop()`` began each event is dropped and counted in
    /// ``LoopStatistics/eventsDroppedAfterStop``, as `send` drops it. A
    /// ``EventCapacity/bounded(_:)`` queue takes as many as it has room for, in order, and drops
    /// the rest the same way (``LoopStatistics/eventsDroppedOverCapacity``). An empty sequence
    /// does nothing.
    ///
    /// The sequence is copied into an array before the loop's lock is taken, so iterating it
    /// runs no code under the lock; a lazy sequence is evaluated on the calling thread.
    @inlinable
    public func send(contentsOf events: some Sequence<Event>) {
        engine.receive(contentsOf: Array(events))
    }

    /// Sends an event and returns the state right after the reducer ran on it — for
    /// request/response code such as an HTTP handler.
    ///
    /// Ordered with ``send(_:)`` calls like any other event. When a bounded queue is full it
    /// waits, in arrival order, for room instead of dropping the event.
    ///
    /// - Throws: ``LoopError/stopped`` if the loop stopped before the event was reduced;
    ///   ``LoopError/cancelled`` if the calling task was cancelled while waiting for room (the
    ///   event was then never queued: it is counted and reported as dropped,
    ///   ``DropReason/cancelledWhileWaiting``, before the call throws). Once queued, an event is
    ///   reduced even if the caller is cancelled.
    @inlinable
    @discardableResult
    public func sendAndWait(_ event: Event) async throws -> State {
        try await engine.submit(event)
    }

    /// The latest published state: the state after the last batch of events the loop finished,
    /// and never older than the state a returned ``sendAndWait(_:)`` call saw.
    ///
    /// A snapshot, safe to read from any thread. While another thread (``Backend/callback``), the
    /// actor (``Backend/actor``) or the host task (``Backend/stream``) is draining a batch, it may
    /// lag behind the reducer by the events of that batch. To follow every state, use ``observe(_:)`` or
    /// ``states``.
    @inlinable
    public var state: State {
        engine.published
    }

    /// Counters of events reduced and dropped and of effects started and ended.
    @inlinable
    public var statistics: LoopStatistics {
        engine.statistics
    }

    /// Calls `observer` with the current state, then with every later state, in order, none
    /// skipped, until the returned ``Observation`` is cancelled or released, or the loop stops.
    ///
    /// The observer runs where the reducer runs (see ``Loop``), one call at a time; it must be
    /// quick and may call ``send(_:)``. Observing a stopped loop calls `observer` once with the
    /// final state — at once, or, while a stop is under way, once the stop has settled it.
    @inlinable
    public func observe(_ observer: @escaping @Sendable (State) -> Void) -> Observation {
        guard let id = engine.addObserver(onState: observer, onStop: nil) else {
            return Observation {}
        }
        return Observation { [engine] in engine.removeObserver(id) }
    }

    /// Every state as an `AsyncSequence`: the current state first, then each new one in order,
    /// buffering all that the reader has not taken yet. Finishes when the loop stops.
    ///
    /// A reader slower than the loop makes the buffer grow; use
    /// ``states(bufferingPolicy:)`` with `.bufferingNewest(n)` to keep memory bounded at the cost
    /// of skipping intermediate states.
    public var states: AsyncStream<State> {
        states(bufferingPolicy: .unbounded)
    }

    /// Every state as an `AsyncSequence`, with a chosen policy for a reader slower than the loop:
    /// `.unbounded` (the default of ``states``) keeps every state; `.bufferingNewest(n)` keeps
    /// the latest `n` and drops older unread ones; `.bufferingOldest(n)` keeps the first `n`
    /// unread and drops newer ones. The current state comes first; the stream finishes when the
    /// loop stops, and ending the iteration removes the subscriber.
    public func states(bufferingPolicy: AsyncStream<State>.Continuation.BufferingPolicy) -> AsyncStream<State> {
        let (stream, continuation) = AsyncStream.makeStream(of: State.self, bufferingPolicy: bufferingPolicy)
        let id = engine.addObserver(
            onState: { continuation.yield($0) },
            onStop: { continuation.finish() })
        if let id {
            continuation.onTermination = { [engine] _ in engine.removeObserver(id) }
        }
        return stream
    }

    /// Returns when the loop is idle: no event queued or being reduced and no effect running.
    ///
    /// For tests and orderly hand-offs. A loop with a never-ending effect (an `events` source, a
    /// timer) never becomes idle; a stopped loop is idle. Called from inside one of this loop's
    /// own effects it cannot be satisfied, so it logs an error and returns at once.
    @inlinable
    public func waitUntilIdle() async {
        await engine.waitUntilIdle()
    }

    /// Suspends until the loop stops; cancelling the calling task stops the loop. Returns once
    /// every effect has ended (every other effect, when called from inside one of the loop's
    /// effects).
    ///
    /// The way to tie a loop's life to a task — a service's `run()`, a view's `.task {}`.
    ///
    /// On ``Backend/stream`` with ``LoopConfiguration/hosting`` set to ``LoopHosting/run``, the
    /// first caller's task *is* the loop: the state is owned and every `.run` effect runs as a
    /// child task inside this call, so the caller's task-local values and priority reach every
    /// effect. Everywhere else it waits for the stop.
    @inlinable
    public func run() async {
        await withTaskCancellationHandler {
            await engine.hostForRun()
            await engine.waitUntilStopped()
        } onCancel: {
            engine.beginStop()
        }
    }

    /// Stops the loop: nothing is reduced from now on, queued events are discarded (and counted),
    /// every running effect is cancelled exactly once, observers and ``states`` finish. Returns
    /// when every effect has ended — every `.run` task has returned and every callback
    /// cancellation has run.
    ///
    /// An effect that ignores cancellation (a CPU-bound loop that never checks
    /// `Task.isCancelled`) holds this call for as long as it runs; use
    /// ``stop(timeout:clock:)`` to bound the wait. Called from inside one of this loop's effects,
    /// it returns once every *other* effect has ended.
    ///
    /// Idempotent: later calls wait for the same stop.
    @inlinable
    public func stop() async {
        await engine.beginStopInCaller()
        await engine.waitUntilStopped()
    }

    /// Stops the loop like ``stop()``, but waits at most `timeout` for the effects to end.
    ///
    /// The stop itself is not bounded — every effect is still cancelled at once, and the loop
    /// still counts as stopping until the last one ends — only the wait is. The report names the
    /// effects still running when the bound passed (cancelled, but their tasks had not returned),
    /// so that a service can log who ignored cancellation.
    ///
    /// - Parameters:
    ///   - timeout: How long to wait for the effects to end.
    ///   - clock: The clock that measures `timeout`; a test clock makes the bound deterministic.
    @inlinable
    @discardableResult
    public func stop<C: Clock>(timeout: Duration, clock: C = ContinuousClock()) async -> StopReport
    where C.Duration == Duration {
        await engine.stop(timeout: timeout, clock: clock)
    }
}

/// What a bounded ``Loop/stop(timeout:clock:)`` found.
public struct StopReport: Sendable, Hashable, CustomStringConvertible {
    /// The effects still running when the bound passed, oldest first; empty when every effect
    /// ended in time.
    public var unfinishedEffects: [EffectIdentity]

    /// Whether every effect ended within the bound.
    public var stoppedInTime: Bool { unfinishedEffects.isEmpty }

    public init(unfinishedEffects: [EffectIdentity]) {
        self.unfinishedEffects = unfinishedEffects
    }

    public var description: String {
        stoppedInTime
            ? "every effect ended in time"
            : "still running: " + unfinishedEffects.map(\.description).joined(separator: ", ")
    }
}

/// Which effect: its identity within its loop and the feedback that started it, as in
/// ``EffectLifecycleEvent``.
public struct EffectIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The effect's identity, unique within its loop.
    public let effect: UInt64
    /// The position of the feedback that started it in the loop's `feedbacks` array.
    public let feedback: Int

    public init(effect: UInt64, feedback: Int) {
        self.effect = effect
        self.feedback = feedback
    }

    public var description: String { "effect \(effect) of feedback \(feedback)" }
}

/// A running observation of a ``Loop``'s states, from ``Loop/observe(_:)``.
///
/// Keep it for as long as you want states: cancelling or releasing it ends the observation. The
/// observer is removed in order with the loop's events, so it may still see states reduced
/// before the removal took effect.
public final class Observation: Sendable {
    private let cancellation: Cancellation

    @usableFromInline
    init(_ onCancel: @escaping @Sendable () -> Void) {
        self.cancellation = Cancellation(onCancel)
    }

    /// Ends the observation. Idempotent.
    public func cancel() {
        cancellation.cancel()
    }

    deinit {
        cancellation.cancel()
    }
}
