/// One entry in a loop's queue. Everything that must happen in order with the reducer —
/// events, the start of the feedbacks, observers joining and leaving — travels through the same
/// FIFO queue and is handled by whoever holds the drain role.
@usableFromInline
enum QueueItem<State: Sendable, Event: Sendable>: Sendable {
    /// An event from ``Loop/send(_:)`` (no handle) or from an effect (its handle).
    case event(Event, EffectHandle?)
    /// An event from ``Loop/sendAndWait(_:)``: the reply gets the state right after it.
    /// `UnsafeContinuation` rather than `CheckedContinuation`: the checked one is a resilient
    /// type, which would leave this enum without a fixed layout and make every enqueue of every
    /// event look up type metadata at run time (W1, the send workload, measures it).
    /// The queue resumes each reply exactly once: on reduce, or when stop discards it.
    case submit(Event, UnsafeContinuation<State, any Error>)
    /// An event of a loop that propagates `ServiceContext`, in place of ``event(_:_:)`` and
    /// ``submit(_:_:)``: only such a loop makes these, so an untraced loop's items and send path
    /// stay as they are.
    case traced(Event, EventCause<State>)
    /// The loop's first step: every feedback sees the initial state.
    case start
    case addObserver(ObserverEntry<State>)
    case removeObserver(Int)
}

/// An observer of states: `onState` for each state in order, `onStop` once when the loop stops.
@usableFromInline
struct ObserverEntry<State: Sendable>: Sendable {
    @usableFromInline let id: Int
    @usableFromInline let onState: @Sendable (State) -> Void
    @usableFromInline let onStop: (@Sendable () -> Void)?

    @inlinable
    init(id: Int, onState: @escaping @Sendable (State) -> Void, onStop: (@Sendable () -> Void)?) {
        self.id = id
        self.onState = onState
        self.onStop = onStop
    }
}

/// A ``Loop/sendAndWait(_:)`` call waiting for room in a full bounded queue.
@usableFromInline
struct ParkedSubmit<State: Sendable, Event: Sendable>: Sendable {
    @usableFromInline let id: UInt64
    @usableFromInline let event: Event
    @usableFromInline let reply: UnsafeContinuation<State, any Error>
    /// Set when the loop propagates `ServiceContext`: the call's context, with `reply`.
    @usableFromInline let cause: EventCause<State>?

    @inlinable
    init(id: UInt64, event: Event, reply: UnsafeContinuation<State, any Error>, cause: EventCause<State>?) {
        self.id = id
        self.event = event
        self.reply = reply
        self.cause = cause
    }

    /// The queue item that joins a batch once there is room.
    @inlinable
    var item: QueueItem<State, Event> {
        if let cause { return .traced(event, cause) }
        return .submit(event, reply)
    }
}
