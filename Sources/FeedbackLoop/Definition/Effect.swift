/// The work a feedback starts for a value of its query.
///
/// An effect is a description; the loop runs it when a feedback asks and stops it when the
/// feedback decides (for ``Feedback/skippingRepeated(_:effects:)`` and its kin, when the query
/// changes or goes away; effects of ``Feedback/custom(_:)`` and ``Feedback/events(_:)`` are never
/// cancelled before the loop stops), or when the loop stops. Every event an effect sends goes
/// through the loop's queue, so the effect can never change state directly and can never
/// re-enter the reducer.
///
/// Once the loop has cancelled an effect, nothing it sends changes state again: events it sends
/// afterwards are dropped and counted in ``LoopStatistics/eventsDroppedFromCancelledEffects``, and
/// so are events it sent earlier that had not been reduced yet when it was cancelled. The same
/// holds once an effect has ended by itself: its sink delivers nothing more.
public struct Effect<Event: Sendable>: Sendable {
    @usableFromInline
    enum Work: Sendable {
        case none
        case send([Event])
        // The priority's raw value: `TaskPriority` is resilient, and a payload of unknown layout
        // would cost every effect a run-time metadata lookup and value-witness copies.
        case run(priority: UInt8?, @Sendable (Sink<Event>) async throws -> Void)
        case callback(@Sendable (Sink<Event>) -> Cancellation)
    }

    @usableFromInline let work: Work

    @inlinable init(_ work: Work) { self.work = work }

    /// No work: the feedback's query is noted and nothing runs.
    public static var none: Effect { Effect(.none) }

    /// Events to enqueue at once, in order, when the effect starts.
    ///
    /// They are queued behind the events already waiting, never reduced inside the call that
    /// started the effect, so a feedback can answer every state with an event without growing the
    /// stack. A `send` effect finishes as it starts, so there is nothing for the loop to cancel.
    @inlinable
    public static func send(_ events: Event...) -> Effect { Effect(.send(events)) }

    /// Events to enqueue at once, in order, when the effect starts. See ``send(_:)``.
    @inlinable
    public static func send(contentsOf events: some Sequence<Event>) -> Effect {
        Effect(.send(Array(events)))
    }

    /// Asynchronous work that runs in its own `Task`, sending events through `sink`.
    ///
    /// The loop cancels the task when the query that started it changes or goes away, or when the
    /// loop stops; `body` sees that as ordinary task cancellation (`Task.isCancelled`,
    /// `CancellationError` from `Task.sleep`, `withTaskCancellationHandler`). ``Loop/stop()``
    /// returns only after every such task has returned.
    ///
    /// An error thrown by `body` neither crashes nor stops the loop: it is counted in
    /// ``LoopStatistics/effectsFailed`` and handed to ``LoopConfiguration/onEffectError``. Errors
    /// thrown after the loop cancelled the effect are expected and ignored.
    ///
    /// > Important: To end with a result, use ``Sink/finish(sending:)`` (or ``task(priority:_:)``)
    /// > rather than a plain `send` followed by `return`. A plain last `send` whose event moves
    /// > the state off this effect's query cancels the effect while it is still inside `send`: on
    /// > ``Backend/callback`` the sending task reduces the event in place, so the code after it
    /// > sees cancellation and the effect counts as cancelled; on ``Backend/actor`` it depends on
    /// > whether the body returns before the actor reduces. `finish(sending:)` marks the effect
    /// > finished first, identically on every backend.
    @inlinable
    public static func run(
        priority: TaskPriority? = nil,
        _ body: @escaping @Sendable (_ send: Sink<Event>) async throws -> Void
    ) -> Effect {
        Effect(.run(priority: priority?.rawValue, body))
    }

    /// Asynchronous work whose result is the effect's one event: `operation` runs in its own
    /// `Task`, and the event it returns is sent with ``Sink/finish(sending:)``, so the effect
    /// counts as finished whatever that event does to the state.
    ///
    /// ```swift
    /// .skippingRepeated({ $0.pageToLoad }) { page in
    ///     .task { .loaded(try await api.page(page)) }
    /// }
    /// ```
    ///
    /// Cancellation and errors work as for ``run(priority:_:)``: when the query changes first, the
    /// task is cancelled and its result, if it still arrives, is dropped and counted.
    @inlinable
    public static func task(
        priority: TaskPriority? = nil,
        _ operation: @escaping @Sendable () async throws -> Event
    ) -> Effect {
        .run(priority: priority) { send in send.finish(sending: try await operation()) }
    }

    /// Callback-style work: `body` starts it on the loop's drain thread and returns how to stop it.
    ///
    /// Use it for a `DispatchSourceTimer`, a NIO future, a delegate or any API that calls back.
    /// The loop calls the returned ``Cancellation`` exactly once when the query changes or goes
    /// away, or when the loop stops. Work that completes by itself should call
    /// ``Sink/finish()`` so that the loop no longer counts it as running (``Loop/waitUntilIdle()``
    /// waits for running effects).
    ///
    /// `body` must return promptly: it runs while the loop holds its drain role, so events sent
    /// from inside it are queued and reduced after it returns.
    @inlinable
    public static func callback(
        _ body: @escaping @Sendable (_ sink: Sink<Event>) -> Cancellation
    ) -> Effect {
        Effect(.callback(body))
    }
}
