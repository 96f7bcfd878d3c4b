import Instrumentation

/// What a loop that propagates `ServiceContext` (see ``ServiceContextPropagation``) keeps with an
/// event in its queue: the context it was sent in, and what an untraced loop's queue item holds
/// beside the event (the effect that sent it, or the reply a `sendAndWait` caller waits for).
/// Boxed, so that a traced item (``QueueItem/traced(_:_:)``) is no larger than an untraced one.
@usableFromInline
final class EventCause<State: Sendable>: Sendable {
    @usableFromInline let context: ServiceContext?
    /// The effect that sent the event, `nil` for an event from outside the loop or a `.send` effect.
    @usableFromInline let handle: EffectHandle?
    /// Set for an event from ``Loop/sendAndWait(_:)``; resumed exactly once, as for ``QueueItem/submit(_:_:)``.
    @usableFromInline let reply: UnsafeContinuation<State, any Error>?

    @inlinable
    init(context: ServiceContext?, handle: EffectHandle?, reply: UnsafeContinuation<State, any Error>?) {
        self.context = context
        self.handle = handle
        self.reply = reply
    }
}

/// The context of the event a propagating loop is reducing, while it is reduced and its feedbacks
/// react: effects started then take it as their cause's. Only a loop that propagates has one.
@usableFromInline
final class CurrentCause: @unchecked Sendable {
    // @unchecked: `context` is read and written only by the holder of the drain role (the state's
    // owner processing a queue item, and the feedbacks' effect starts it runs); the role is taken
    // and released under `LoopEngine.lock`, which orders every access between threads.
    @exclusivity(unchecked) @usableFromInline var context: ServiceContext?

    @inlinable
    init() {}
}

extension LoopEngine {
    /// The context that events sent by `handle`'s effect carry: a `.run` effect's body runs in its
    /// cause's context, so its sends read the task-local (a body that binds a context of its own
    /// passes that on); a `.callback` effect's sink may be called from any thread, so its events
    /// carry the context the effect was started in.
    @inlinable
    static func context(of handle: EffectHandle) -> ServiceContext? {
        if handle.isTask, let current = ServiceContext.current { return current }
        return handle.context
    }

    /// An event `handle`'s effect sends, in a loop that propagates `ServiceContext`.
    @inlinable
    @inline(never)
    static func traced(_ event: Event, from handle: EffectHandle) -> QueueItem<State, Event> {
        .traced(event, EventCause(context: context(of: handle), handle: handle, reply: nil))
    }

    /// ``receive(_:from:)`` for a loop that propagates: the event joins the queue with its context.
    @inlinable
    @inline(never)
    func receiveTraced(_ event: Event, from handle: EffectHandle?) {
        let context: ServiceContext? = if let handle { Self.context(of: handle) } else { ServiceContext.current }
        let item = QueueItem<State, Event>.traced(event, EventCause(context: context, handle: handle, reply: nil))
        let action = lock.withLock { $0.send(item, from: handle) }
        perform(action, event: event, in: context)
    }

    /// ``perform(_:event:)`` for an event of a loop that propagates: a drop is reported in the
    /// event's context, where `onDrop` finds it as `ServiceContext.current` (the sender's own
    /// task-locals may be another's: a `.callback` effect's sink is called from any thread).
    @inlinable
    func perform(_ action: LoopStateMachine<State, Event>.EnqueueAction, event: Event?, in context: ServiceContext?) {
        guard case .dropped = action else {
            perform(action, event: event)
            return
        }
        ServiceContext.$current.withValue(context) { perform(action, event: event) }
    }

    /// Events an effect of a loop that propagates sent after stop, reported in `context`.
    @inlinable
    @inline(never)
    func reportDropped(_ events: [Event], in context: ServiceContext?) {
        ServiceContext.$current.withValue(context) {
            for event in events { reportDrop(event, reason: .afterStop, firstWarning: false) }
        }
    }

    /// A `.run` effect's body, run in its cause's context. `nil` binds no context: an effect whose
    /// cause had none must not see the task-locals of the task that runs it (the `stream` host's).
    @inlinable
    @inline(never)
    static func inContext(
        _ context: ServiceContext?, _ body: @escaping @Sendable (Sink<Event>) async throws -> Void
    ) -> @Sendable (Sink<Event>) async throws -> Void {
        { sink in try await ServiceContext.$current.withValue(context) { try await body(sink) } }
    }
}
