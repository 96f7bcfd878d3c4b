/// Hooks that see everything a ``Loop`` does: each transition, each effect's life, each dropped
/// event. The raw material for logs, metrics, recordings and state diagrams.
///
/// Every hook is optional and costs nothing when `nil`. ``onTransition`` runs on the thread that
/// holds the drain role, right after the reducer and before feedbacks and observers see the new
/// state, so transitions arrive one at a time and in order. ``onEffect`` and ``onDrop`` run on
/// whichever thread caused them (the drain thread, an effect's task, a sender). Hooks must not
/// block; they may call ``Loop/send(_:)``.
public struct LoopInstrumentation<State: Sendable, Event: Sendable>: Sendable {
    /// Sees the state before the reducer ran, the event, and the state it produced.
    public var onTransition: (@Sendable (_ before: State, _ event: Event, _ after: State) -> Void)?
    /// Sees each effect start, finish, fail or get cancelled.
    public var onEffect: (@Sendable (_ event: EffectLifecycleEvent) -> Void)?
    /// Sees each event the loop did not reduce, with the reason. In a loop that propagates
    /// `ServiceContext` (see ``ServiceContextPropagation``), it runs with the dropped event's
    /// context as `ServiceContext.current`, whichever thread reports the drop, so that an
    /// instrument can file the drop under the request that sent the event (an event discarded at
    /// stop included, though ``Loop/stop()``'s caller reports it).
    public var onDrop: (@Sendable (_ event: Event, _ reason: DropReason) -> Void)?
    /// Sees each event of a child feature (see `ChildScope`, `KeyedChildScope`) that reached no
    /// child because that child no longer existed, described as text, once per event counted in
    /// ``LoopStatistics/eventsOrphaned``. The parent's event itself was reduced, and
    /// ``onTransition`` saw it.
    public var onOrphan: (@Sendable (_ childEvent: String) -> Void)?
    /// Gives the loop's steps and effects contexts of their own, for a tracer's spans; see
    /// ``LoopContextHooks``. A loop whose instrumentation has them propagates `ServiceContext`
    /// unless its configuration says ``ServiceContextPropagation/disabled``, which turns them off.
    public var contexts: LoopContextHooks<Event>?

    public init(
        onTransition: (@Sendable (_ before: State, _ event: Event, _ after: State) -> Void)? = nil,
        onEffect: (@Sendable (_ event: EffectLifecycleEvent) -> Void)? = nil,
        onDrop: (@Sendable (_ event: Event, _ reason: DropReason) -> Void)? = nil,
        onOrphan: (@Sendable (_ childEvent: String) -> Void)? = nil,
        contexts: LoopContextHooks<Event>? = nil
    ) {
        self.onTransition = onTransition
        self.onEffect = onEffect
        self.onDrop = onDrop
        self.onOrphan = onOrphan
        self.contexts = contexts
    }

    /// One instrumentation that calls each of `instrumentations` in turn.
    public static func combining(_ instrumentations: [LoopInstrumentation]) -> LoopInstrumentation {
        let transitions = instrumentations.compactMap(\.onTransition)
        let effects = instrumentations.compactMap(\.onEffect)
        let drops = instrumentations.compactMap(\.onDrop)
        let orphans = instrumentations.compactMap(\.onOrphan)
        var combined = LoopInstrumentation(contexts: .combining(instrumentations.compactMap(\.contexts)))
        if !transitions.isEmpty {
            combined.onTransition = { before, event, after in
                for hook in transitions { hook(before, event, after) }
            }
        }
        if !effects.isEmpty {
            combined.onEffect = { event in
                for hook in effects { hook(event) }
            }
        }
        if !drops.isEmpty {
            combined.onDrop = { event, reason in
                for hook in drops { hook(event, reason) }
            }
        }
        if !orphans.isEmpty {
            combined.onOrphan = { childEvent in
                for hook in orphans { hook(childEvent) }
            }
        }
        return combined
    }
}

/// Why a ``Loop`` did not reduce an event.
public enum DropReason: String, Sendable, Hashable, CaseIterable {
    /// Sent after ``Loop/stop()`` began or after the loop was released.
    case afterStop
    /// Sent with ``Loop/send(_:)`` while a ``EventCapacity/bounded(_:)`` queue was full.
    case overCapacity
    /// Sent by an effect that the loop had cancelled.
    case fromCancelledEffect
    /// Still queued when ``Loop/stop()`` began.
    case discardedAtStop
    /// Sent with ``Loop/sendAndWait(_:)`` while a ``EventCapacity/bounded(_:)`` queue was full,
    /// and the calling task was cancelled while it waited for room: the event was never queued,
    /// and the caller gets ``LoopError/cancelled``. Reported in the caller's task, before the
    /// call throws.
    case cancelledWhileWaiting
}

/// A step in an effect's life, as seen by ``LoopInstrumentation/onEffect``.
public struct EffectLifecycleEvent: Sendable, Hashable, CustomStringConvertible {
    /// What happened.
    public enum Kind: Sendable, Hashable {
        case started
        case finished
        case cancelled
        /// The effect threw while running; the error's description.
        case failed(String)
    }

    /// The effect's identity, unique within its loop.
    public let effect: UInt64
    /// The position of the feedback that started it in the loop's `feedbacks` array.
    public let feedback: Int
    /// The ``Feedback/label`` of the feedback that started it, if it has one.
    public var feedbackLabel: String?
    public let kind: Kind

    public init(effect: UInt64, feedback: Int, feedbackLabel: String? = nil, kind: Kind) {
        self.effect = effect
        self.feedback = feedback
        self.feedbackLabel = feedbackLabel
        self.kind = kind
    }

    /// The feedback that started the effect, as people read it: its label, or its position.
    public var feedbackName: String { feedbackLabel ?? "feedback \(feedback)" }

    /// `ticker (effect 3): started`, or `feedback 1 (effect 3): started` for an unlabelled feedback.
    public var description: String { "\(feedbackName) (effect \(effect)): \(kind)" }
}
