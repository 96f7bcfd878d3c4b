import Synchronization

/// A `.run` effect on the `stream` backend: made while the state's owner processes an event
/// (``StreamDriver/startTask(_:handle:priority:body:sink:marker:)``), where no task group is in
/// reach, and added by the host to the loop's task group as soon as the drain pass ends.
///
/// One object per effect, and the only one the backend adds to a task: the host's list of
/// effects to add, the closure the child task runs (which captures nothing else, so it needs no
/// context of its own) and, as a ``ChildCancellation``, the registry's way to cancel the effect
/// alone.
@usableFromInline
final class ChildEffect<State: Sendable, Event: Sendable>: ChildCancellation, @unchecked Sendable {
    // @unchecked: every property of its own is immutable; the inherited ones are guarded as
    // `ChildCancellation` says.
    @usableFromInline let driver: StreamDriver<State, Event>
    @usableFromInline let engine: LoopEngine<State, Event>
    @usableFromInline let handle: EffectHandle
    @usableFromInline let priority: TaskPriority?
    @usableFromInline let body: @Sendable (Sink<Event>) async throws -> Void
    @usableFromInline let sink: Sink<Event>
    @usableFromInline let marker: EffectMarker

    @inlinable
    init(
        driver: StreamDriver<State, Event>,
        engine: LoopEngine<State, Event>,
        handle: EffectHandle,
        priority: TaskPriority?,
        body: @escaping @Sendable (Sink<Event>) async throws -> Void,
        sink: Sink<Event>,
        marker: EffectMarker
    ) {
        self.driver = driver
        self.engine = engine
        self.handle = handle
        self.priority = priority
        self.body = body
        self.sink = sink
        self.marker = marker
        super.init()
    }

    /// The child task's work: the effect's body, in the child task itself, which it lends to
    /// ``ChildCancellation/cancel()`` for as long as the body runs. One task per effect, as on
    /// the other backends. Cancelling the host's task cancels it too, as structured concurrency
    /// does.
    @inlinable
    func run() async {
        // A child task, or `obeyInPlace`'s `Task`: there is always a current task.
        withUnsafeCurrentTask { task in lend(task) }
        var failure: (any Error)?
        do {
            try await EffectMarker.inside(marker) { try await body(sink) }
        } catch {
            failure = error
        }
        if !leave() { await cancelFinished() }
        // Cancelled with the whole tree (the host's task was: its `run()` caller), not by the
        // loop: the loop's stop is on its way and would find the effect already ended. It is
        // cancelled all the same, and counted so, as on every backend. (Cancelled by the loop,
        // the effect is already marked, and the task is not asked: W3 with a `.run` effect, where
        // the loop cancels almost every effect, measures the question.)
        if !handle.isCancelled && Task.isCancelled { engine.cancel(handle) }
        engine.taskReturned(handle, error: failure)
    }
}

/// How the loop cancels one ``ChildEffect``: by cancelling the child task its body runs in, which
/// the task lends for as long as the body runs (``lend(_:)`` to ``leave()``). Not generic, so
/// that the registry's ``EffectStopper`` holds it as a plain reference.
///
/// Its phases move by atomic compare-and-exchange, with no lock: a generic lock around an enum of
/// the phases was copied and destroyed through the run-time's value witnesses, with metadata
/// lookups, on every effect (W3 with a `.run` effect, in `scripts/callgrind.sh`, measures it).
// @unchecked: `task` is written by the child task before `phase` leaves `pending` (releasing) and
// read by `cancel()` only after it moved `phase` from `running` to `cancelling` (acquiring);
// `waiter` is written by the child task before it moves `phase` from `cancelling` to `awaited`
// (releasing) and read by `cancel()` only after it found `awaited` (acquiring). For the same
// reason neither needs the run time's exclusivity check (`@exclusivity(unchecked)`), which cost
// about 120 instructions per effect.
@usableFromInline
class ChildCancellation: @unchecked Sendable {
    /// Where the effect is, one of the constants below.
    @usableFromInline let phase = Atomic<UInt8>(ChildCancellation.pending)
    /// The child task, waiting in ``awaited`` for ``cancel()`` to finish with its task.
    @exclusivity(unchecked) @usableFromInline final var waiter: UnsafeContinuation<Void, Never>?
    /// The task the body runs in, lent by the task itself from ``pending`` on. An
    /// `UnsafeCurrentTask` is valid only while its task lives: ``cancel()`` uses it only between
    /// ``running`` and the end of ``cancelling``, and the task cannot end meanwhile, because it
    /// waits for that cancel to finish (``leave()``, ``cancelFinished()``).
    @exclusivity(unchecked) @usableFromInline final var task: UnsafeCurrentTask?

    /// Waiting to be added to the host's group.
    @usableFromInline static var pending: UInt8 { 0 }
    /// The body runs in ``task``.
    @usableFromInline static var running: UInt8 { 1 }
    /// ``cancel()`` is cancelling ``task``.
    @usableFromInline static var cancelling: UInt8 { 2 }
    /// ``cancel()`` is cancelling ``task``, and the body has ended: the child task waits in
    /// ``waiter`` for the cancel to finish.
    @usableFromInline static var awaited: UInt8 { 3 }
    /// Cancelled: before the task started, or the task has been told.
    @usableFromInline static var cancelled: UInt8 { 4 }
    /// The body has ended; there is nothing left to cancel.
    @usableFromInline static var ended: UInt8 { 5 }

    @inlinable
    init() {}

    /// The loop cancels the effect. Later calls, and calls once the body has ended, do nothing.
    @inlinable
    final func cancel() {
        guard beginCancel() else { return }
        // No lock is held: cancelling runs the task's cancellation handlers, which are user code.
        task!.cancel()
        endCancel()
    }

    /// The first half of ``cancel()``: `true` when the body runs and its task is to be
    /// cancelled (``cancelling``, until ``endCancel()``); a pending effect is cancelled here,
    /// before its task starts.
    @inlinable
    final func beginCancel() -> Bool {
        var current = phase.load(ordering: .acquiring)
        while true {
            let next: UInt8
            switch current {
            case Self.pending: next = Self.cancelled
            case Self.running: next = Self.cancelling
            default: return false
            }
            let (exchanged, original) = phase.compareExchange(
                expected: current, desired: next, ordering: .acquiringAndReleasing)
            if exchanged { return next == Self.cancelling }
            current = original
        }
    }

    /// The second half of ``cancel()``, once the task has been told: a body that ended
    /// meanwhile waits in ``cancelFinished()`` for this, and its task may end now.
    @inlinable
    final func endCancel() {
        let (exchanged, original) = phase.compareExchange(
            expected: Self.cancelling, desired: Self.cancelled, ordering: .acquiringAndReleasing)
        guard !exchanged else { return }
        precondition(original == Self.awaited, "ChildCancellation: cancel() found phase \(original) while it was cancelling")
        let waiter = waiter!
        phase.store(Self.ended, ordering: .relaxed)
        waiter.resume()
    }

    /// The child task lends `task`, itself, before the body starts. Cancelled before it started,
    /// the task cancels itself instead and lends nothing: the body runs in a cancelled task, as
    /// a cancelled effect's task does on the other backends.
    @inlinable
    final func lend(_ task: UnsafeCurrentTask?) {
        if phase.load(ordering: .acquiring) == Self.pending {
            self.task = task!
            let (exchanged, original) = phase.compareExchange(
                expected: Self.pending, desired: Self.running, ordering: .acquiringAndReleasing)
            if exchanged { return }
            precondition(original == Self.cancelled, "ChildCancellation: lend() found phase \(original); an effect's task starts once")
        }
        task?.cancel()
    }

    /// The body has ended. Returns `false` while a ``cancel()`` still uses the task: the task
    /// must not end before it has finished (``cancelFinished()``).
    @inlinable
    final func leave() -> Bool {
        let (exchanged, original) = phase.compareExchange(
            expected: Self.running, desired: Self.ended, ordering: .acquiringAndReleasing)
        if exchanged || original == Self.cancelled { return true }
        precondition(original == Self.cancelling, "ChildCancellation: leave() found phase \(original); an effect's task ends once")
        return false
    }

    /// Returns once the ``cancel()`` that ``leave()`` found under way has finished with the task.
    /// Out of line: rare, and an asynchronous call inlined into ``run()`` costs every effect.
    @inlinable
    @inline(never)
    final func cancelFinished() async {
        await withUnsafeContinuation { (waiter: UnsafeContinuation<Void, Never>) in
            self.waiter = waiter
            let (exchanged, original) = phase.compareExchange(
                expected: Self.cancelling, desired: Self.awaited, ordering: .acquiringAndReleasing)
            guard !exchanged else { return }
            // The cancel finished meanwhile.
            precondition(original == Self.cancelled, "ChildCancellation: waiting for a cancel, found phase \(original)")
            waiter.resume()
        }
    }
}
