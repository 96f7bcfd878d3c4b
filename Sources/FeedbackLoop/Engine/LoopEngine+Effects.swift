import Instrumentation

// Effects: starting, cancelling and ending them, and the registry's books after each.

extension LoopEngine {
    /// Starts `effect` for feedback number `feedback`; `life` is the life of the child feature
    /// that starts it, when a child lifted into the loop does (see ``ChildLife``).
    @inlinable
    func start(_ effect: Effect<Event>, feedback: Int, life: ChildLife? = nil) -> EffectHandle? {
        switch effect.work {
        case .none:
            return nil
        case .send(let events):
            if let life {
                startChildSend(events, feedback: feedback, life: life)
                return nil
            }
            if let cause {
                startTracedSend(events, feedback: feedback, context: cause.context)
                return nil
            }
            let id = nextID()
            instrumentation?.hooks.onEffect?(EffectLifecycleEvent(effect: id, feedback: feedback, kind: .started))
            let dropped = lock.withLock { $0.sendEffect(events) }
            for event in dropped { reportDrop(event, reason: .afterStop, firstWarning: false) }
            instrumentation?.hooks.onEffect?(EffectLifecycleEvent(effect: id, feedback: feedback, kind: .finished))
            return nil
        case .run(let priority, let body):
            let id = nextID()
            let context = cause == nil ? nil : contextOfEffect(id, feedback: feedback)
            let handle = EffectHandle(id: id, feedback: feedback, isTask: true, life: life, context: context)
            instrumentation?.hooks.onEffect?(EffectLifecycleEvent(effect: handle.id, feedback: feedback, kind: .started))
            let sink = Sink(receiver: self, handle: handle)
            let marker = EffectMarker(loop: ObjectIdentifier(self), effect: handle.id)
            let body = cause == nil ? body : Self.inContext(handle.context, body)
            let stopper = driver.startTask(self, handle: handle, priority: priority, body: body, sink: sink, marker: marker)
            let unkept = lock.withLock { $0.register(RunningEffect(handle: handle, stopper: stopper)) }
            _ = unkept  // released here, after the lock
            return handle
        case .callback(let body):
            let id = nextID()
            let context = cause == nil ? nil : contextOfEffect(id, feedback: feedback)
            let handle = EffectHandle(id: id, feedback: feedback, isTask: false, life: life, context: context)
            instrumentation?.hooks.onEffect?(EffectLifecycleEvent(effect: handle.id, feedback: feedback, kind: .started))
            let sink = Sink(receiver: self, handle: handle)
            let cancellation = cause == nil ? body(sink) : Self.start(body, sink, in: handle.context)
            let unkept = lock.withLock { $0.register(RunningEffect(handle: handle, stopper: .cancellation(cancellation))) }
            _ = unkept  // released here, after the lock
            return handle
        }
    }

    /// A child's `.send` effect. Its events need a handle, finished at once, only to carry the
    /// child's life: they must not reach a child added back under the same id before their turn
    /// (see ``ChildLife``). Out of line, so that the loop's own `.send` effects (W2) pay nothing.
    /// A `.send` effect of a loop that propagates `ServiceContext`: its events carry `context`,
    /// the cause's. Out of line, as the paths below, so that ``start(_:feedback:life:)`` stays as
    /// small for every other loop.
    @inlinable
    @inline(never)
    func startTracedSend(_ events: [Event], feedback: Int, context: ServiceContext?) {
        let id = nextID()
        instrumentation?.hooks.onEffect?(EffectLifecycleEvent(effect: id, feedback: feedback, kind: .started))
        let carried = EventCause<State>(context: context, handle: nil, reply: nil)
        let dropped = lock.withLock { $0.sendEffect(events, cause: carried) }
        if !dropped.isEmpty { reportDropped(dropped, in: context) }
        instrumentation?.hooks.onEffect?(EffectLifecycleEvent(effect: id, feedback: feedback, kind: .finished))
    }

    /// The context a `.run` or `.callback` effect of a loop that propagates runs in: the cause's,
    /// or the one the instrumentation's ``LoopContextHooks/effect`` derives from it.
    @inlinable
    @inline(never)
    func contextOfEffect(_ id: UInt64, feedback: Int) -> ServiceContext? {
        let cause = self.cause?.context
        guard let effect = instrumentation?.hooks.contexts?.effect else { return cause }
        return effect(EffectLifecycleEvent(effect: id, feedback: feedback, kind: .started), cause)
    }

    /// A `.callback` effect's start, in its cause's context.
    @inlinable
    @inline(never)
    static func start(
        _ body: @Sendable (Sink<Event>) -> Cancellation, _ sink: Sink<Event>, in context: ServiceContext?
    ) -> Cancellation {
        ServiceContext.$current.withValue(context) { body(sink) }
    }

    @inlinable
    @inline(never)
    func startChildSend(_ events: [Event], feedback: Int, life: ChildLife) {
        let handle = EffectHandle(id: nextID(), feedback: feedback, isTask: false, life: life, context: cause?.context)
        _ = handle.markFinished()
        instrumentation?.hooks.onEffect?(EffectLifecycleEvent(effect: handle.id, feedback: feedback, kind: .started))
        if cause != nil {
            let carried = EventCause<State>(context: handle.context, handle: handle, reply: nil)
            let dropped = lock.withLock { $0.sendEffect(events, cause: carried) }
            if !dropped.isEmpty { reportDropped(dropped, in: handle.context) }
        } else {
            let dropped = lock.withLock { $0.sendEffect(events, from: handle) }
            for event in dropped { reportDrop(event, reason: .afterStop, firstWarning: false) }
        }
        instrumentation?.hooks.onEffect?(EffectLifecycleEvent(effect: handle.id, feedback: feedback, kind: .finished))
    }

    @inlinable
    func cancel(_ handle: EffectHandle) {
        guard handle.markCancelled() else { return }
        var (entry, followup) = lock.withLock { $0.cancelled(handle) }
        entry?.stopper.stop()
        entry = nil
        instrumentation?.hooks.onEffect?(EffectLifecycleEvent(effect: handle.id, feedback: handle.feedback, kind: .cancelled))
        followup.perform()
    }

    /// A `.run` effect's task returned, or threw. Inlinable, like everything an effect's task
    /// calls, so that it is specialised where the task was made: generic, it ran metadata
    /// lookups for every effect (W3 with a `.run` effect measures it).
    @inlinable
    func taskReturned(_ handle: EffectHandle, error: (any Error)?) {
        let ranToEnd = handle.markFinished()
        let outcome: EffectLifecycleEvent.Kind? =
            ranToEnd ? (error.map { .failed(String(describing: $0)) } ?? .finished) : nil
        // Report before the registry forgets the effect: once it does, `waitUntilIdle` and `stop`
        // may return, and whoever waited must find the end already reported.
        if let outcome {
            if let error, let effectFailed = instrumentation?.hooks.contexts?.effectFailed {
                effectFailed(EffectLifecycleEvent(effect: handle.id, feedback: handle.feedback, kind: outcome), error)
            }
            instrumentation?.hooks.onEffect?(EffectLifecycleEvent(effect: handle.id, feedback: handle.feedback, kind: outcome))
        }
        if ranToEnd, let error { configuration.reportEffectFailure(error, feedback: handle.feedback) }
        var followup = lock.withLock { $0.taskReturned(handle.id, outcome: outcome) }
        followup.perform()
    }

    /// An effect ended by itself (``Sink/finish()`` or ``Sink/finish(sending:)``), with `event`
    /// as its last word: the effect counts as finished *before* the event is queued, so whatever
    /// the reducer does with the event cannot cancel the effect that sent it.
    @inlinable
    func finish(_ handle: EffectHandle, sending event: Event?) {
        guard handle.markFinished() else {
            // Cancelled (or ended) before it finished: its last word is late, like any other, and
            // the send's transition drops and counts it.
            if let event { receive(event, from: handle) }
            return
        }
        instrumentation?.hooks.onEffect?(EffectLifecycleEvent(effect: handle.id, feedback: handle.feedback, kind: .finished))
        let item = event.map { event -> QueueItem<State, Event> in
            guard cause != nil else { return .event(event, handle) }
            return Self.traced(event, from: handle)
        }
        var (followup, enqueued) = lock.withLock { $0.finished(handle, sending: item) }
        followup.perform()
        if cause != nil {
            perform(enqueued, event: event, in: Self.context(of: handle))
        } else {
            perform(enqueued, event: event)
        }
    }
}
