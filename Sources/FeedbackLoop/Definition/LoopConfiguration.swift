import Logging

/// How a ``Loop`` takes in events and reports trouble. The defaults suit most loops.
public struct LoopConfiguration: Sendable {
    /// A name for the loop, used in log messages and metrics.
    public var label: String

    /// How many events sent from outside (``Loop/send(_:)``, ``Loop/sendAndWait(_:)``) may wait
    /// in the queue. Events sent by the loop's own effects are never refused.
    public var capacity: EventCapacity

    /// Where the loop logs effect errors, events sent after stop and overload. Every message
    /// carries the loop's ``label`` as `loop` metadata.
    public var logger: Logger

    /// Called with every error an effect throws while it is still running (errors thrown after the
    /// loop cancelled the effect are expected and ignored). `nil`, the default, logs the error at
    /// `error` level with ``logger``.
    ///
    /// Called on the effect's own task or thread; it must not block.
    public var onEffectError: (@Sendable (_ error: any Error) -> Void)?

    /// A configuration with the given values.
    public init(
        label: String = "FeedbackLoop",
        capacity: EventCapacity = .unbounded,
        logger: Logger? = nil,
        onEffectError: (@Sendable (_ error: any Error) -> Void)? = nil
    ) {
        self.label = label
        self.capacity = capacity
        self.logger = logger ?? Self.defaultLogger
        self.onEffectError = onEffectError
    }

    // One logger shared by every loop that does not bring its own: creating a `Logger` asks the
    // logging system for a handler, which would cost each of 100,000 idle loops an allocation.
    private static let defaultLogger = Logger(label: "FeedbackLoop")
}

/// How many externally sent events a ``Loop`` queues before it sheds load.
public enum EventCapacity: Sendable, Hashable {
    /// Every event is queued. The default: nothing is ever refused, and a producer that outruns
    /// the reducer for long grows the queue without limit.
    case unbounded
    /// At most `limit` externally sent events wait in the queue (a `limit` below 1 counts as 1).
    /// When the queue is full, ``Loop/send(_:)`` drops the event and counts it in
    /// ``LoopStatistics/eventsDroppedOverCapacity`` (and logs the first drop), while
    /// ``Loop/sendAndWait(_:)`` waits, in order, for room.
    case bounded(Int)

    @usableFromInline
    var limit: Int {
        switch self {
        case .unbounded: Int.max
        case .bounded(let limit): Swift.max(1, limit)
        }
    }
}
