/// Something that watches loops of any state and event types — a metrics sink, a tracer — set
/// once in ``LoopConfiguration/instruments`` and applied to every loop made with that
/// configuration.
///
/// Where ``LoopInstrumentation`` is typed by one loop's `State` and `Event` (for a
/// `TransitionLog` or an `EventRecorder`, which keep them), an instrument is not, so one value
/// can live in a configuration shared by many kinds of loops:
///
/// ```swift
/// let configuration = LoopConfiguration(label: "orders", logger: logger, instruments: [LoopMetrics(label: "orders")])
/// let loop = Loop(initial: Orders.State(), reduce: Orders.reduce, feedbacks: Orders.feedbacks,
///                 configuration: configuration)
/// ```
///
/// The hooks it returns follow ``LoopInstrumentation``'s threading rules: they run on the drain
/// thread, an effect's task or a sender, and must not block.
public protocol LoopInstrument: Sendable {
    /// The hooks for one loop, called once when the loop is made.
    func instrumentation<State: Sendable, Event: Sendable>(
        state: State.Type, event: Event.Type
    ) -> LoopInstrumentation<State, Event>

    /// The hooks for one loop whose ``LoopConfiguration/label`` is `label`, called once when
    /// the loop is made. ``Loop`` calls this one; by default it is
    /// ``instrumentation(state:event:)``, for instruments that do not name the loop.
    func instrumentation<State: Sendable, Event: Sendable>(
        state: State.Type, event: Event.Type, label: String
    ) -> LoopInstrumentation<State, Event>
}

extension LoopInstrument {
    public func instrumentation<State: Sendable, Event: Sendable>(
        state: State.Type, event: Event.Type, label: String
    ) -> LoopInstrumentation<State, Event> {
        instrumentation(state: state, event: event)
    }
}

extension LoopConfiguration {
    /// Whether a loop made with this configuration has hooks of the configuration's own: the
    /// logger's debug and trace lines, or ``instruments``.
    @usableFromInline
    var isInstrumented: Bool {
        logger.logLevel <= .debug || !instruments.isEmpty
    }

    /// Everything that watches a loop made with this configuration, as one instrumentation:
    /// the logger's debug and trace lines (when its level lets them through), each of
    /// ``instruments``, then `instrumentation`, with effects named by their feedbacks' labels.
    ///
    /// ``Loop`` calls it once, when it is made; nothing here runs per event unless a hook does.
    @usableFromInline
    func instrumentation<State: Sendable, Event: Sendable>(
        adding instrumentation: LoopInstrumentation<State, Event>?,
        feedbacks: [Feedback<State, Event>]
    ) -> LoopInstrumentation<State, Event>? {
        var all: [LoopInstrumentation<State, Event>] = []
        if logger.logLevel <= .debug {  // see `isInstrumented`
            all.append(.verboseLogging(logger, label: label))
        }
        for instrument in instruments {
            all.append(instrument.instrumentation(state: State.self, event: Event.self, label: label))
        }
        if let instrumentation { all.append(instrumentation) }
        var combined: LoopInstrumentation<State, Event>
        switch all.count {
        case 0: return nil
        case 1: combined = all[0].labelingEffects(of: feedbacks)
        default: combined = LoopInstrumentation.combining(all).labelingEffects(of: feedbacks)
        }
        combined.contexts = combined.contexts?.labelling(feedbacks.map(\.label))
        return combined
    }
}

extension LoopConfiguration {
    /// This configuration, knowing the labels of `feedbacks` for the messages it logs.
    /// ``Loop`` calls it once, when it is made.
    @usableFromInline
    func labelling<State: Sendable, Event: Sendable>(_ feedbacks: [Feedback<State, Event>]) -> LoopConfiguration {
        // Unlabelled loops keep the shared empty array: 100,000 idle loops pay no allocation.
        guard feedbacks.contains(where: { $0.label != nil }) else { return self }
        var copy = self
        copy.feedbackLabels = feedbacks.map(\.label)
        return copy
    }

    /// Hands an error an effect threw while running to ``onEffectError``, or, without one,
    /// logs it once at `error`, naming the feedback by its label.
    @usableFromInline
    func reportEffectFailure(_ error: any Error, feedback: Int) {
        if let onEffectError {
            onEffectError(error)
            return
        }
        let name = feedbackLabels.indices.contains(feedback) ? feedbackLabels[feedback] : nil
        logger.error(
            "effect failed: \(error)",
            metadata: ["loop": "\(label)", "feedback": "\(name ?? "feedback \(feedback)")"])
    }
}
