import Logging
import Synchronization

/// The engine behind a ``Loop``, shared by every backend: the queue and its drain role, the
/// registry of running effects, stop, idle and statistics. What differs between backends — where
/// and when the state's owner runs — is behind ``driver`` (see ``LoopDriver``).
///
/// Effects' sinks and tasks hold the engine, never the ``Loop``, so releasing the last reference to
/// a loop runs its `deinit`, which stops the engine and lets every effect go.
@usableFromInline
final class LoopEngine<State: Sendable, Event: Sendable>: EventReceiver, Sendable {
    @usableFromInline let lock: InlineLock<LoopStateMachine<State, Event>>
    /// Set when stop begins, so that a drain under way stops reducing mid-batch. A hint read
    /// without the lock; the lock-protected phase is the authority.
    @usableFromInline let stopRequested: Atomic<Bool>
    @usableFromInline let ids: Atomic<UInt64>
    @usableFromInline let configuration: LoopConfiguration
    /// `nil` for an uninstrumented loop, the common case: boxed, so that such a loop keeps one
    /// word for it rather than four optional closures (56 bytes more per idle loop).
    @usableFromInline let instrumentation: InstrumentationHooks<State, Event>?
    @usableFromInline let driver: Driver<State, Event>
    /// Set only for a loop that propagates `ServiceContext` (``ServiceContextPropagation``,
    /// decided here once): `nil` keeps every other loop's send path as it is.
    @usableFromInline let cause: CurrentCause?

    @inlinable
    init(
        initial: State,
        reduce: @escaping @Sendable (inout State, Event) -> Void,
        feedbacks: [Feedback<State, Event>],
        backend: Backend,
        configuration: LoopConfiguration,
        instrumentation: LoopInstrumentation<State, Event>?
    ) {
        // Every value is built before the first store, and the atomics are stored last: in the
        // other order Swift 6.3's release build of this init crashes the compiler ("Found outside
        // of lifetime use", a `drop_deinit` of `stopRequested` in CopyPropagation) once
        // `LoopConfiguration` is a single reference.
        let driver = Driver(
            backend, owner: StateOwner(initial: initial, reduce: reduce, feedbacks: feedbacks), configuration: configuration)
        let cause = configuration.serviceContext.isOn(givesContexts: instrumentation?.contexts != nil) ? CurrentCause() : nil
        self.lock = InlineLock(LoopStateMachine<State, Event>(initial: initial, capacity: configuration.capacity.limit))
        self.configuration = configuration
        self.instrumentation = instrumentation.map(InstrumentationHooks.init)
        self.driver = driver
        self.cause = cause
        self.stopRequested = Atomic(false)
        self.ids = Atomic(0)
    }

    @inlinable
    func nextID() -> UInt64 {
        ids.wrappingAdd(1, ordering: .relaxed).newValue
    }

    @inlinable
    var published: State {
        lock.withLock { $0.published }
    }

    @inlinable
    var statistics: LoopStatistics {
        lock.withLock { $0.statistics }
    }
}

/// Marks the tasks of a loop's `.run` effects, so that ``Loop/stop()``, ``Loop/run()`` and
/// ``Loop/waitUntilIdle()`` called from inside one can tell, instead of waiting for themselves.
@usableFromInline
struct EffectMarker: Sendable {
    @usableFromInline let loop: ObjectIdentifier
    @usableFromInline let effect: UInt64

    @inlinable
    init(loop: ObjectIdentifier, effect: UInt64) {
        self.loop = loop
        self.effect = effect
    }

    @TaskLocal static var current: EffectMarker?

    /// Runs an effect's body with `marker` as the current task's effect.
    @usableFromInline
    static func inside(_ marker: EffectMarker, _ body: @Sendable () async throws -> Void) async throws {
        try await $current.withValue(marker) { try await body() }
    }
}

/// A loop's ``LoopInstrumentation``, held by reference (see ``LoopEngine/instrumentation``).
@usableFromInline
final class InstrumentationHooks<State: Sendable, Event: Sendable>: Sendable {
    @usableFromInline let hooks: LoopInstrumentation<State, Event>

    @inlinable
    init(_ hooks: LoopInstrumentation<State, Event>) {
        self.hooks = hooks
    }
}
