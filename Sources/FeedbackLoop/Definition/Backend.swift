/// The engine that runs a ``Loop``.
///
/// Every backend runs the same system definition — initial state, reducer and feedbacks — with the
/// same guarantees: events are reduced one at a time in the order their `send` calls returned,
/// every state reaches every feedback and observer in order, and an effect's events stop counting
/// the moment the loop cancels it. They differ only in where the work runs:
///
/// - ``callback``: the thread that sends an event into an idle loop drains the queue itself, on
///   the spot, and every event queued meanwhile by any thread is drained in the same pass. No
///   thread hop and no task per event: the cheapest way to run a loop, and the one whose `send`
///   has reduced the event by the time it returns when no other thread is draining.
/// - ``actor``: an actor owns the state and runs the reducer. `send` enqueues and, if the actor is
///   not already draining, wakes it with one task; the actor then drains whatever has arrived, in
///   batches. Sending never runs the reducer on the caller's thread.
/// - ``stream``: the loop as one structured task tree. A task of the loop's (or the caller of
///   ``Loop/run()``, see ``LoopHosting``) owns the state and consumes an `AsyncStream`; every
///   `.run` effect is a child task in its task group, so task-local values bound around the loop
///   reach every effect and the loop's task ends only after all of them.
///
/// The raw values are stable and suitable for command-line flags and configuration files.
public enum Backend: String, CaseIterable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// A lock-protected event queue drained by whichever thread holds the drain role.
    case callback
    /// An actor that owns the state and drains the event queue in batches on its own executor.
    ///
    /// On the actor's default executor the feedbacks first see the initial state on the thread
    /// that calls `Loop.init`, before it returns (no other code can reach the loop yet); every
    /// event is reduced on the actor. With ``LoopConfiguration/executor`` set, that first look
    /// also runs on the given executor.
    case actor
    /// One task that owns the state, fed by an `AsyncStream`, with every `.run` effect a child
    /// task of it.
    case stream

    public var description: String { rawValue }
}
