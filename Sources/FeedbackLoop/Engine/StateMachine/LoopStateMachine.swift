/// Everything about a loop that more than one thread touches, guarded by the loop's one lock.
///
/// A state machine in the style of swift-nio: each mutating method is one transition and returns
/// what the caller must do *after* leaving the lock (drain, wake waiters, tear down, release), so
/// nothing is resumed or called back while the lock is held — and nothing whose release can run
/// user code is released under it either: replaced published states, registry entries (a
/// `Cancellation` or a task that may capture the loop's owner) and waiters all leave through the
/// returned actions and die after the lock is dropped.
///
/// Its fields are changed only by its own transitions (the methods below); `LoopEngine` never
/// writes a field. They are not `private` only because `@inlinable` transitions — which a client
/// binary specialises — cannot touch private storage; tests read them. The loop's life and its
/// drain role are a small state machine of their own, ``Phase``, whose transitions trap when
/// called in a phase where they make no sense.
///
/// The drain role: the phase is `draining` while one thread (`callback`), the actor (`actor`) or
/// the host task (`stream`) is handling queue items. Only the holder touches the state's owner
/// (state, reducer, feedbacks, observers). The role is taken by the sender that finds the loop idle and released
/// only by the holder, under the lock, when it finds the queue empty — so an item enqueued while
/// the holder finishes is always either seen by the holder or starts a new drain (no lost wake-up).
@usableFromInline
struct LoopStateMachine<State: Sendable, Event: Sendable>: Sendable {
    @usableFromInline var items: [QueueItem<State, Event>] = []
    /// The loop's life and its drain role (see ``Phase``).
    @usableFromInline var phase = Phase.idle
    @usableFromInline var externalQueued = 0
    @usableFromInline let capacity: Int
    @usableFromInline var published: State
    @usableFromInline var statistics = LoopStatistics()
    /// Every effect whose work may still be under way: a `.run` effect until its task returns
    /// (even after it was cancelled or finished with ``Sink/finish(sending:)``), a `.callback`
    /// effect until it finishes or its cancellation has run.
    @usableFromInline var effects = EffectRegistry()
    /// Effects whose work ended before the drain role got to register them (a `.run` body that
    /// returned at once, a callback effect that finished inside its `body`). Almost always empty.
    @usableFromInline var endedBeforeRegistration: Set<UInt64> = []
    @usableFromInline var parked: [ParkedSubmit<State, Event>] = []
    /// Callers of ``Loop/waitUntilIdle()``, and of a test's wait for its own condition: one
    /// list, so that the drain checks one count on its way to idle.
    @usableFromInline var waiters: [Waiter] = []
    @usableFromInline var stopWaiters: [StopWaiter] = []
    /// Observers that joined while a stop was under way: the final state is not published yet,
    /// so they get it, and their stop, once teardown is done.
    @usableFromInline var observersAwaitingTeardown: [ObserverEntry<State>] = []
    @usableFromInline var nextObserverID = 0
    @usableFromInline var warnedAfterStop = false
    @usableFromInline var warnedOverCapacity = false

    @inlinable
    init(initial: State, capacity: Int) {
        self.published = initial
        self.capacity = capacity
    }
}

/// A caller waiting for the loop to be idle, or, with `untilIdle` false, for its next progress of
/// any kind (a drain ends, an effect's work ends, teardown finishes): the tests' wait for a
/// condition of their own, in the test target.
@usableFromInline
struct Waiter: Sendable {
    @usableFromInline let continuation: CheckedContinuation<Void, Never>
    @usableFromInline let untilIdle: Bool

    @inlinable
    init(_ continuation: CheckedContinuation<Void, Never>, untilIdle: Bool) {
        self.continuation = continuation
        self.untilIdle = untilIdle
    }
}

/// A caller of ``Loop/stop()`` or ``Loop/run()`` waiting for every effect to end — every effect
/// but `except`, the one it runs inside, when it was called from an effect.
@usableFromInline
struct StopWaiter: Sendable {
    @usableFromInline let id: UInt64
    @usableFromInline let except: UInt64?
    @usableFromInline let continuation: CheckedContinuation<Void, Never>

    @inlinable
    init(id: UInt64, except: UInt64?, continuation: CheckedContinuation<Void, Never>) {
        self.id = id
        self.except = except
        self.continuation = continuation
    }
}

extension QueueItem {
    @inlinable
    var isEvent: Bool {
        switch self {
        case .event, .submit, .traced: true
        case .start, .addObserver, .removeObserver: false
        }
    }
}
