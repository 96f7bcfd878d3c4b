import Instrumentation

/// Whether a loop carries its callers' `ServiceContext` to the effects their events cause.
///
/// A loop that propagates reads `ServiceContext.current` in ``Loop/send(_:)`` and
/// ``Loop/sendAndWait(_:)`` and keeps it with the event in the queue. While the loop reduces that
/// event and its feedbacks react, the event's context is *the cause*: an effect started then runs
/// in it on every backend — a `.run` effect's body inside `ServiceContext.withValue(_:)`, a
/// `.callback` effect's start likewise — and every event the effect sends carries it into the
/// next step, whichever thread sends it. A feedback reacts to each event of a batch in turn, so
/// an effect started for a state that a batch produced runs in the context of the event that
/// produced that state, not of the batch's last event.
///
/// The choice is made once, when the loop is created: a loop that does not propagate pays
/// nothing for it on the send path.
public enum ServiceContextPropagation: Sendable, Hashable {
    /// Propagate when an instrument or tracer is bootstrapped (`InstrumentationSystem.instrument`
    /// is not the no-op one) at the time the loop is created. A loop created before
    /// `InstrumentationSystem.bootstrap(_:)` does not propagate.
    case automatic
    /// Always propagate, with or without an instrument (tests, or a context used for more than
    /// tracing, such as a request id).
    case enabled
    /// Never propagate. Effects then see the task-locals of whichever task starts them, which
    /// the backends do not promise (see ``Backend``).
    case disabled

    /// Whether a loop created now propagates.
    @usableFromInline
    var isOn: Bool {
        switch self {
        case .enabled: true
        case .disabled: false
        case .automatic: !(InstrumentationSystem.instrument is NoOpInstrument)
        }
    }
}
