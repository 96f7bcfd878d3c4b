#if Tracing
import FeedbackLoop
import Tracing

/// Spans for a loop's work, with swift-distributed-tracing: one per reduced event, one per effect.
///
/// Add it to the loop's configuration; nothing else changes:
///
/// ```swift
/// let configuration = LoopConfiguration(label: "orders", instruments: [LoopTracing()])
/// let loop = Loop(initial: Orders.State(), reduce: Orders.reduce, feedbacks: Orders.feedbacks(api),
///                 configuration: configuration)
/// ```
///
/// The loop then makes, on every backend:
///
/// - a span **`reduce`** per event it reduces, a child of the context the event was sent in (the
///   caller's span, for `Loop.send(_:)` and `Loop.sendAndWait(_:)`; the effect's span, for an
///   event an effect sends). It lasts while the reducer runs and the feedbacks and observers see
///   the state it produced; the reducer and feedbacks run in its context. Attributes:
///   `feedback_loop.label` (`LoopConfiguration.label`) and `feedback_loop.event`, the event's
///   case name (its payload is never read: it may hold what a trace must not);
/// - a span **`reduce`** for each event the loop drops instead, ended at once, with
///   `feedback_loop.dropped` set to the `DropReason`'s raw value (`afterStop`, `overCapacity`,
///   `fromCancelledEffect`, `discardedAtStop`, `cancelledWhileWaiting`), a child of the event's
///   context (its sender's span, or the span of the effect that sent it) whichever thread
///   reports the drop;
/// - a span **`effect`** per `.run` or `.callback` effect, a child of the `reduce` span of the
///   event whose step started it (an effect of the initial state has no parent: it begins a
///   trace). It lasts from the effect's start to its end, and its attribute
///   `feedback_loop.effect.outcome` says how it ended: `finished`, `cancelled` (by its feedback, or
///   by `Loop.stop()`), or `failed`, with the error recorded on the span and its status an
///   error. `feedback_loop.feedback` names the feedback that started it (its label, or
///   `feedback N`). The effect's body, and a `.callback` effect's start, run in this span's
///   context, so a client called there (an HTTP or database call) makes its spans children of
///   it; the events the effect sends carry it on, and their `reduce` spans are its children.
///
/// A `.send` effect does no work of its own: it gets no span, and its events' spans are children
/// of the `reduce` span of the step that sent them.
///
/// With the package trait `Services`, what FeedbackLoopServices refuses is traced too, in the
/// caller's context: an event a `LoopService` refuses while it shuts down gets a `reduce` span
/// with `feedback_loop.dropped` set to `refusedDuringShutdown` (when its loop has this
/// instrument), and a use a `LoopRegistry` refuses a `get-or-create` span with
/// `feedback_loop.refused` set to the `LoopRegistryError` code, the error recorded and an error
/// status (when the registry's configuration has this instrument as its `tracing`).
///
/// Every span the loop starts has ended when `Loop.stop()` returns: stop cancels the running
/// effects (their spans end `cancelled`) and discards the queued events (their spans say
/// `discardedAtStop`).
///
/// ## Propagation
///
/// Spans need the loop to carry contexts from events to effects (`ServiceContextPropagation`):
/// a loop whose configuration names this instrument does so with the default,
/// `ServiceContextPropagation.automatic`, whether or not a tracer is bootstrapped. A loop
/// configured with `ServiceContextPropagation.disabled` makes only the spans of dropped events.
///
/// ## Threading and cost
///
/// The `reduce` spans start and end where the loop reduces (the thread holding the drain role,
/// the loop's actor or its host task); an `effect` span ends on the thread or task where the
/// effect ends. Each span is one `startSpan` of the tracer and, for an effect, one entry in a
/// table under a lock, taken at the effect's start and end. A loop without this instrument pays
/// nothing for it.
public struct LoopTracing: LoopInstrument {
    /// The tracer that makes the spans.
    public let tracer: any Tracer

    /// Spans made by `tracer`, by default the one bootstrapped in `InstrumentationSystem` when
    /// this value is made. Pass one explicitly (an `InMemoryTracer`, say) to keep tests
    /// independent of the global bootstrap.
    public init(tracer: any Tracer = InstrumentationSystem.tracer) {
        self.tracer = tracer
    }

    /// The hooks for a loop labelled `label`; `Loop` calls this, once per loop.
    ///
    /// - Parameters:
    ///   - state: The loop's state type.
    ///   - event: The loop's event type.
    ///   - label: The loop's `LoopConfiguration.label`, the `feedback_loop.label` of its spans.
    public func instrumentation<State: Sendable, Event: Sendable>(
        state: State.Type, event: Event.Type, label: String
    ) -> LoopInstrumentation<State, Event> {
        LoopSpans(tracer: tracer, label: label).instrumentation()
    }

    /// The hooks for a loop whose label is not known: its spans carry the default label,
    /// `FeedbackLoop`. `Loop` calls ``instrumentation(state:event:label:)`` instead.
    ///
    /// - Parameters:
    ///   - state: The loop's state type.
    ///   - event: The loop's event type.
    public func instrumentation<State: Sendable, Event: Sendable>(
        state: State.Type, event: Event.Type
    ) -> LoopInstrumentation<State, Event> {
        instrumentation(state: state, event: event, label: LoopConfiguration().label)
    }
}

/// The spans of one loop: the tracer, the loop's label, and the spans of its running effects,
/// by effect id (unique within a loop), from the effect's start to the end `LoopInstrumentation.onEffect`
/// reports.
final class LoopSpans: Sendable {
    let tracer: any Tracer
    let label: String
    let effects = Lock<[UInt64: any Span]>([:])

    init(tracer: any Tracer, label: String) {
        self.tracer = tracer
        self.label = label
    }

    func instrumentation<State: Sendable, Event: Sendable>() -> LoopInstrumentation<State, Event> {
        LoopInstrumentation(
            onEffect: { [self] lifecycle in ended(lifecycle) },
            onDrop: { [self] event, reason in dropped(event, reason) },
            contexts: LoopContextHooks(
                step: { [self] event, cause, body in step(event, cause, body) },
                effect: { [self] start, cause in started(start, cause) },
                effectFailed: { [self] effect, error in failed(effect, error) }))
    }

    func step<Event>(_ event: Event, _ cause: ServiceContext?, _ body: (ServiceContext?) -> Void) {
        let span = tracer.startSpan("reduce", context: cause ?? .topLevel)
        span.attributes["feedback_loop.label"] = label
        span.attributes["feedback_loop.event"] = Self.caseName(of: event)
        ServiceContext.$current.withValue(span.context) { body(span.context) }
        span.end()
    }

    func dropped<Event>(_ event: Event, _ reason: DropReason) {
        // The loop reports a drop in the dropped event's context (see `LoopInstrumentation.onDrop`).
        Self.dropped(event, reason: reason.rawValue, label: label, tracer: tracer)
    }

    /// A dropped event's `reduce` span, in the current context, ended at once. Every event that
    /// is not reduced gets this one shape, whoever refused it: the loop (a `DropReason`) or a
    /// service in front of it, so that `feedback_loop.dropped` finds them all.
    static func dropped<Event>(_ event: Event, reason: String, label: String, tracer: any Tracer) {
        let span = tracer.startSpan("reduce", context: ServiceContext.current ?? .topLevel)
        span.attributes["feedback_loop.label"] = label
        span.attributes["feedback_loop.event"] = caseName(of: event)
        span.attributes["feedback_loop.dropped"] = reason
        span.end()
    }

    func started(_ start: EffectLifecycleEvent, _ cause: ServiceContext?) -> ServiceContext? {
        let span = tracer.startSpan("effect", context: cause ?? .topLevel)
        span.attributes["feedback_loop.label"] = label
        span.attributes["feedback_loop.feedback"] = start.feedbackName
        effects.withLock { $0[start.effect] = span }
        return span.context
    }

    func failed(_ effect: EffectLifecycleEvent, _ error: any Error) {
        guard let span = effects.withLock({ $0[effect.effect] }) else { return }
        span.recordError(error)
        span.setStatus(SpanStatus(code: .error))
    }

    func ended(_ lifecycle: EffectLifecycleEvent) {
        let outcome: String
        switch lifecycle.kind {
        case .started: return
        case .finished: outcome = "finished"
        case .cancelled: outcome = "cancelled"
        case .failed: outcome = "failed"
        }
        // `.send` effects are reported too, and have no span.
        guard let span = effects.withLock({ $0.removeValue(forKey: lifecycle.effect) }) else { return }
        span.attributes["feedback_loop.effect.outcome"] = outcome
        span.end()
    }

    /// An enum event's case name, read from its mirror so that its payload is never formatted;
    /// the type's name for an event that is not an enum.
    static func caseName<Event>(of event: Event) -> String {
        let mirror = Mirror(reflecting: event)
        guard mirror.displayStyle == .enum else { return String(describing: Event.self) }
        if let label = mirror.children.first?.label { return label }
        return String(describing: event)
    }
}
#endif
