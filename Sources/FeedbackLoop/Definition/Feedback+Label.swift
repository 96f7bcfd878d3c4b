extension Feedback {
    /// This feedback with a name that failure messages, logs and diagrams use instead of its
    /// position in the loop's `feedbacks` array ("feedback 2").
    ///
    /// ```swift
    /// feedbacks: [
    ///     .whenBecomesTrue({ $0.isTicking }) { _ in .run { send in … } }
    ///         .labeled("ticker"),
    /// ]
    /// ```
    ///
    /// The label reaches ``EffectLifecycleEvent/feedbackLabel`` of every effect the feedback
    /// starts, and through it ``LoopInstrumentation/logging(_:label:)``, `LoopMetrics` and the
    /// test kit's messages. It costs nothing per event: it is read once, when the loop is made.
    public func labeled(_ label: String) -> Feedback {
        var copy = self
        copy.label = label
        return copy
    }
}

extension LoopInstrumentation {
    /// This instrumentation with each effect's ``EffectLifecycleEvent/feedbackLabel`` filled in
    /// from `feedbacks`; itself, untouched, when no feedback has a label.
    /// ``Loop`` applies it, once, to the instrumentation it is given.
    func labelingEffects(of feedbacks: [Feedback<State, Event>]) -> LoopInstrumentation {
        let labels = feedbacks.map(\.label)
        guard let onEffect, labels.contains(where: { $0 != nil }) else { return self }
        var labelled = self
        labelled.onEffect = { lifecycle in
            var lifecycle = lifecycle
            if lifecycle.feedbackLabel == nil, labels.indices.contains(lifecycle.feedback) {
                lifecycle.feedbackLabel = labels[lifecycle.feedback]
            }
            onEffect(lifecycle)
        }
        return labelled
    }
}
