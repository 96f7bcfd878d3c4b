import Logging

/// How a ``Loop`` takes in events and reports trouble. The defaults suit most loops.
public struct LoopConfiguration: Sendable {
    /// A name for the loop, used in log messages and metrics.
    public var label: String {
        @inlinable get { storage.values.label }
        set { update { $0.label = newValue } }
    }

    /// How many events sent from outside (``Loop/send(_:)``, ``Loop/sendAndWait(_:)``) may wait
    /// in the queue. Events sent by the loop's own effects are never refused.
    public var capacity: EventCapacity {
        @inlinable get { storage.values.capacity }
        set { update { $0.capacity = newValue } }
    }

    /// Where the loop logs. Every message carries the loop's ``label`` as `loop` metadata.
    ///
    /// - `error`: each effect that throws while running, once (unless ``onEffectError`` takes it).
    /// - `warning`: the first event dropped after stop, and the first dropped by a full queue.
    /// - `debug`: each transition (the event, the states before and after); `trace`: each
    ///   effect's start, finish, failure and cancellation, named by its feedback's label. These
    ///   two are wired only when the logger's level lets them through when the loop is made, so
    ///   a logger at `info` costs nothing per event.
    public var logger: Logger {
        @inlinable get { storage.values.logger }
        set { update { $0.logger = newValue } }
    }

    /// Called with every error an effect throws while it is still running (errors thrown after the
    /// loop cancelled the effect are expected and ignored). `nil`, the default, logs the error at
    /// `error` level with ``logger``.
    ///
    /// Called on the effect's own task or thread; it must not block.
    public var onEffectError: (@Sendable (_ error: any Error) -> Void)? {
        @inlinable get { storage.values.onEffectError }
        set { update { $0.onEffectError = newValue } }
    }

    /// Instruments that see every loop made with this configuration, whatever its state and
    /// event types — metrics, above all (`LoopMetrics` in FeedbackLoopServices is one). With
    /// ``logger`` this is the one place to wire a loop's logs and metrics; a `LoopService`
    /// running the loop finds both here too. See ``LoopInstrument``.
    public var instruments: [any LoopInstrument] {
        @inlinable get { storage.values.instruments }
        set { update { $0.instruments = newValue } }
    }

    /// The executor a loop on ``Backend/actor`` runs on: its reducer, feedbacks, observers and the
    /// synchronous start of its `.callback` effects all run isolated to this `SerialExecutor`.
    /// `nil`, the default, gives the loop an actor of its own on the default executor.
    ///
    /// Give a server's own executor to keep a loop's work on it with no thread hop — for example
    /// SwiftNIO's `eventLoop.executor`, so that a per-connection loop runs on that connection's
    /// event loop. The executor must run every job it is given, in order, one at a time (the
    /// `SerialExecutor` contract); the loop holds it for its whole life.
    ///
    /// ``Backend/callback`` has no executor of its own (it runs where the drain role is taken)
    /// and ignores this setting, as does ``Backend/stream``, whose reducer runs in its host task
    /// (see ``hosting``).
    public var executor: (any SerialExecutor)? {
        @inlinable get { storage.values.executor }
        set { update { $0.executor = newValue } }
    }

    /// Where a loop on ``Backend/stream`` keeps its task tree: a task of its own, the default, or
    /// the task that calls ``Loop/run()``. The other backends ignore it. See ``LoopHosting``.
    public var hosting: LoopHosting {
        @inlinable get { storage.values.hosting }
        set { update { $0.hosting = newValue } }
    }

    /// Whether the loop carries its callers' `ServiceContext` to the effects their events cause
    /// (see ``ServiceContextPropagation``). Decided when the loop is created; by default, only
    /// when a tracer or instrument is bootstrapped.
    public var serviceContext: ServiceContextPropagation {
        @inlinable get { storage.values.serviceContext }
        set { update { $0.serviceContext = newValue } }
    }

    /// The labels of the loop's feedbacks, by position, for messages; set by ``labelling(_:)``.
    @usableFromInline var feedbackLabels: [String?] {
        @inlinable get { storage.values.feedbackLabels }
        set { update { $0.feedbackLabels = newValue } }
    }

    /// A configuration with the given values.
    public init(
        label: String = "FeedbackLoop",
        capacity: EventCapacity = .unbounded,
        logger: Logger? = nil,
        onEffectError: (@Sendable (_ error: any Error) -> Void)? = nil,
        instruments: [any LoopInstrument] = [],
        executor: (any SerialExecutor)? = nil,
        hosting: LoopHosting = .ownTask,
        serviceContext: ServiceContextPropagation = .automatic
    ) {
        // Compared with the shared storage itself, so that the two cannot drift apart: a default
        // changed there and not here only makes such loops stop sharing it.
        let shared = Self.defaultStorage
        if label == shared.values.label, capacity == shared.values.capacity, hosting == shared.values.hosting,
            serviceContext == shared.values.serviceContext, logger == nil,
            onEffectError == nil, instruments.isEmpty, executor == nil
        {
            self.storage = Self.defaultStorage
        } else {
            self.storage = Storage(
                Values(
                    label: label, capacity: capacity, logger: logger ?? Self.defaultLogger,
                    onEffectError: onEffectError, instruments: instruments, executor: executor, hosting: hosting,
                    serviceContext: serviceContext))
        }
    }

    // The values sit behind one immutable, shared reference: every loop keeps its configuration
    // for its whole life (``Loop/configuration``), and inline they were 96 bytes of each idle
    // loop — the same 96 bytes for every loop made with the defaults, which now share one
    // storage. A setter makes a new storage; configurations are built once, not per event.
    @usableFromInline var storage: Storage

    @usableFromInline
    struct Values: Sendable {
        @usableFromInline var label: String
        @usableFromInline var capacity: EventCapacity
        @usableFromInline var logger: Logger
        @usableFromInline var onEffectError: (@Sendable (_ error: any Error) -> Void)?
        @usableFromInline var instruments: [any LoopInstrument]
        @usableFromInline var executor: (any SerialExecutor)?
        @usableFromInline var hosting: LoopHosting
        @usableFromInline var serviceContext: ServiceContextPropagation
        @usableFromInline var feedbackLabels: [String?] = []
    }

    @usableFromInline
    final class Storage: Sendable {
        @usableFromInline let values: Values

        init(_ values: Values) { self.values = values }
    }

    private mutating func update(_ change: (inout Values) -> Void) {
        var values = storage.values
        change(&values)
        storage = Storage(values)
    }

    // One logger shared by every loop that does not bring its own: creating a `Logger` asks the
    // logging system for a handler, which would cost each of 100,000 idle loops an allocation.
    private static let defaultLogger = Logger(label: "FeedbackLoop")

    /// The values of `LoopConfiguration()`, shared by every configuration made with them. Its
    /// optional and collection fields must stay `nil` and empty: `init` checks only that the
    /// caller's are.
    private static let defaultStorage = Storage(
        Values(
            label: "FeedbackLoop", capacity: .unbounded, logger: defaultLogger, onEffectError: nil, instruments: [],
            executor: nil, hosting: .ownTask, serviceContext: .automatic))
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
