import Instrumentation

/// Hooks for an instrument that gives a loop's steps and effects `ServiceContext`s of their own:
/// a tracer's spans (`LoopTracing`, in FeedbackLoopTracing, is one). Set in
/// ``LoopInstrumentation/contexts``.
///
/// Only a loop that propagates `ServiceContext` (see ``ServiceContextPropagation``) calls them,
/// and a loop whose instrumentation has them propagates unless its configuration says
/// ``ServiceContextPropagation/disabled``. A loop without them pays nothing for them: it decides
/// when it is created.
///
/// The contexts nest as the work does: an event is sent in a context (its *cause*); ``step``
/// gives the step that reduces it a context derived from that one; an effect the step starts gets
/// from ``effect`` a context derived from the step's, and runs in it (a `.run` effect's body, a
/// `.callback` effect's start); the events the effect sends carry the effect's context, and so on.
/// A `.send` effect does no work of its own and gets no context of its own: its events carry the
/// step's.
public struct LoopContextHooks<Event: Sendable>: Sendable {
    /// Runs one step — the reducer on `event`, then the feedbacks and observers on the state it
    /// produced — in a context of the instrument's. `cause` is the context the event was sent in
    /// (`nil` when it was sent outside any). The hook must call `body` exactly once, before it
    /// returns, with the context the step's effects take as their cause.
    ///
    /// Runs where the loop reduces (see ``LoopInstrumentation``), one step at a time, in order;
    /// it must not block. An event the loop drops is not stepped: ``LoopInstrumentation/onDrop``
    /// sees it instead.
    public var step: @Sendable (_ event: Event, _ cause: ServiceContext?, _ body: (ServiceContext?) -> Void) -> Void

    /// The context a `.run` or `.callback` effect runs in, given its start (as
    /// ``LoopInstrumentation/onEffect`` sees it, labelled) and `cause`, the context of the step
    /// that started it (`nil` for the initial state's effects, whose step has no cause).
    ///
    /// Called where the loop reduces, right before ``LoopInstrumentation/onEffect`` sees the
    /// start. The effect's end reaches ``LoopInstrumentation/onEffect`` as every effect's does:
    /// exactly once, as finished, failed or cancelled — at the latest when ``Loop/stop()`` cancels
    /// it, before `stop()` returns.
    public var effect: @Sendable (_ start: EffectLifecycleEvent, _ cause: ServiceContext?) -> ServiceContext?

    /// The error a `.run` effect threw while running, right before ``LoopInstrumentation/onEffect``
    /// sees it fail; on the effect's task. Errors thrown after the loop cancelled the effect are
    /// not failures and do not reach it.
    public var effectFailed: (@Sendable (_ effect: EffectLifecycleEvent, _ error: any Error) -> Void)?

    public init(
        step: @escaping @Sendable (_ event: Event, _ cause: ServiceContext?, _ body: (ServiceContext?) -> Void) -> Void,
        effect: @escaping @Sendable (_ start: EffectLifecycleEvent, _ cause: ServiceContext?) -> ServiceContext?,
        effectFailed: (@Sendable (_ effect: EffectLifecycleEvent, _ error: any Error) -> Void)? = nil
    ) {
        self.step = step
        self.effect = effect
        self.effectFailed = effectFailed
    }

    /// One set of hooks that applies each of `hooks` in turn: each step runs inside every
    /// instrument's, the first outermost, and each effect's context is derived by each in turn
    /// from the one before.
    static func combining(_ hooks: [LoopContextHooks]) -> LoopContextHooks? {
        guard let first = hooks.first else { return nil }
        if hooks.count == 1 { return first }
        let steps = hooks.map(\.step)
        let effects = hooks.map(\.effect)
        let failures = hooks.compactMap(\.effectFailed)
        let step: @Sendable (Event, ServiceContext?, (ServiceContext?) -> Void) -> Void = { event, cause, body in
            Self.step(steps[...], event, cause, body)
        }
        let effect: @Sendable (EffectLifecycleEvent, ServiceContext?) -> ServiceContext? = { start, cause in
            var context = cause
            for effect in effects { context = effect(start, context) }
            return context
        }
        let effectFailed: @Sendable (EffectLifecycleEvent, any Error) -> Void = { effect, error in
            for hook in failures { hook(effect, error) }
        }
        return LoopContextHooks(step: step, effect: effect, effectFailed: failures.isEmpty ? nil : effectFailed)
    }

    /// Runs `body` inside each of `steps`, the first outermost.
    private static func step(
        _ steps: ArraySlice<@Sendable (Event, ServiceContext?, (ServiceContext?) -> Void) -> Void>,
        _ event: Event, _ context: ServiceContext?, _ body: (ServiceContext?) -> Void
    ) {
        guard let outer = steps.first else { return body(context) }
        outer(event, context) { inner in step(steps.dropFirst(), event, inner, body) }
    }

    /// These hooks with each effect's ``EffectLifecycleEvent/feedbackLabel`` filled in from `labels`.
    func labelling(_ labels: [String?]) -> LoopContextHooks {
        guard labels.contains(where: { $0 != nil }) else { return self }
        let label: @Sendable (EffectLifecycleEvent) -> EffectLifecycleEvent = { lifecycle in
            var lifecycle = lifecycle
            if lifecycle.feedbackLabel == nil, labels.indices.contains(lifecycle.feedback) {
                lifecycle.feedbackLabel = labels[lifecycle.feedback]
            }
            return lifecycle
        }
        var labelled = self
        let effect = self.effect
        labelled.effect = { start, cause in effect(label(start), cause) }
        if let effectFailed {
            labelled.effectFailed = { lifecycle, error in effectFailed(label(lifecycle), error) }
        }
        return labelled
    }
}
