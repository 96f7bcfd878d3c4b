/// A `.run` effect on the `stream` backend, waiting for the host to add it to the loop's task
/// group. Made while the state's owner processes an event
/// (``StreamDriver/startTask(_:handle:priority:body:sink:marker:)``), where no task group is in
/// reach; the host adds it as soon as the drain pass ends.
@usableFromInline
struct ChildEffect<Event: Sendable>: Sendable {
    @usableFromInline let handle: EffectHandle
    @usableFromInline let priority: TaskPriority?
    @usableFromInline let body: @Sendable (Sink<Event>) async throws -> Void
    @usableFromInline let sink: Sink<Event>
    @usableFromInline let marker: EffectMarker
    @usableFromInline let cancellation: ChildCancellation

    @inlinable
    init(
        handle: EffectHandle,
        priority: TaskPriority?,
        body: @escaping @Sendable (Sink<Event>) async throws -> Void,
        sink: Sink<Event>,
        marker: EffectMarker,
        cancellation: ChildCancellation
    ) {
        self.handle = handle
        self.priority = priority
        self.body = body
        self.sink = sink
        self.marker = marker
        self.cancellation = cancellation
    }

    /// The child task's work: the effect's body, in the child task itself. A task group cancels
    /// all its children or none and gives no handle to one of them, so the child lends its own
    /// task to ``ChildCancellation`` for as long as the body runs, and the loop cancels this one
    /// effect through it. One task per effect, as on the other backends (the W3 `.run` workload of
    /// `scripts/callgrind.sh` measures what a second task per effect cost). Cancelling the host's
    /// task cancels it too, as structured concurrency does.
    @inlinable
    func run<State: Sendable>(in engine: LoopEngine<State, Event>) async {
        let started = withUnsafeCurrentTask { task in
            // A child task, or `obeyInPlace`'s `Task`: there is always a current task.
            cancellation.enter(ChildTask(task!))
        }
        // Cancelled before it started: the body runs in a cancelled task, as a cancelled
        // effect's task does on the other backends.
        if !started { withUnsafeCurrentTask { $0?.cancel() } }
        var failure: (any Error)?
        do {
            try await EffectMarker.inside(marker) { try await body(sink) }
        } catch {
            failure = error
        }
        await cancellation.leave()
        // Cancelled with the whole tree (the host's task was: its `run()` caller), not by the
        // loop: the loop's stop is on its way and would find the effect already ended. It is
        // cancelled all the same, and counted so, as on every backend. (Cancelled by the loop,
        // the effect is already marked and this does nothing.)
        if Task.isCancelled { engine.cancel(handle) }
        engine.taskReturned(handle, error: failure)
    }
}

/// The task a ``ChildEffect`` runs in, lent to its ``ChildCancellation`` while the body runs.
// @unchecked: `UnsafeCurrentTask` is valid only while its task lives. `ChildCancellation` uses it
// only in `cancel()`, between taking it from `.running` and settling `.cancelling`, and the task
// cannot end meanwhile: its `leave()` waits for that cancel to finish.
@usableFromInline
struct ChildTask: @unchecked Sendable {
    @usableFromInline let task: UnsafeCurrentTask

    @inlinable
    init(_ task: UnsafeCurrentTask) { self.task = task }
}

/// How the loop cancels one ``ChildEffect``: by cancelling the child task its body runs in, which
/// the task lends for as long as the body runs (``enter(_:)`` to ``leave()``).
@usableFromInline
final class ChildCancellation: EffectCanceller {
    @usableFromInline
    enum State: Sendable {
        /// Waiting to be added to the host's group.
        case pending
        /// The body runs in this task.
        case running(ChildTask)
        /// ``cancel()`` is cancelling the task, outside the lock.
        case cancelling
        /// ``cancel()`` is cancelling the task, and the task's ``leave()`` waits for it to finish.
        case cancellingAwaited(UnsafeContinuation<Void, Never>)
        /// Cancelled: before the task started, or the task has been told.
        case cancelled
        /// The body has ended; there is nothing left to cancel.
        case ended
    }

    @usableFromInline let state = Lock<State>(.pending)

    @inlinable
    init() {}

    /// The loop cancels the effect. Later calls, and calls once the body has ended, do nothing.
    @inlinable
    func cancel() {
        let running: ChildTask? = state.withLock { state in
            switch state {
            case .pending:
                state = .cancelled
                return nil
            case .running(let task):
                state = .cancelling
                return task
            case .cancelling, .cancellingAwaited, .cancelled, .ended:
                return nil
            }
        }
        guard let running else { return }
        // After the lock: cancelling runs the task's cancellation handlers, which are user code.
        running.task.cancel()
        let waiter: UnsafeContinuation<Void, Never>? = state.withLock { state in
            switch state {
            case .cancelling:
                state = .cancelled
                return nil
            case .cancellingAwaited(let waiter):
                state = .ended
                return waiter
            case .pending, .running, .cancelled, .ended:
                preconditionFailure("ChildCancellation: cancel() found \(state) while it was cancelling")
            }
        }
        waiter?.resume()  // after the lock: resuming schedules the waiting task
    }

    /// The child task starts the body in `task`. Returns `false` when the effect was cancelled
    /// before it started.
    @inlinable
    func enter(_ task: ChildTask) -> Bool {
        state.withLock { state in
            switch state {
            case .pending:
                state = .running(task)
                return true
            case .cancelled:
                return false
            case .running, .cancelling, .cancellingAwaited, .ended:
                preconditionFailure("ChildCancellation: enter() found \(state); an effect's task starts once")
            }
        }
    }

    /// The body has ended. Returns once no ``cancel()`` uses the task any more, so that the task
    /// can end.
    @inlinable
    func leave() async {
        let cancelling: Bool = state.withLock { state in
            switch state {
            case .running, .cancelled:
                state = .ended
                return false
            case .cancelling:
                return true
            case .pending, .cancellingAwaited, .ended:
                preconditionFailure("ChildCancellation: leave() found \(state); an effect's task ends once")
            }
        }
        guard cancelling else { return }
        await withUnsafeContinuation { (waiter: UnsafeContinuation<Void, Never>) in
            let settled: Bool = state.withLock { state in
                switch state {
                case .cancelling:
                    state = .cancellingAwaited(waiter)
                    return false
                case .cancelled:
                    state = .ended
                    return true
                case .pending, .running, .cancellingAwaited, .ended:
                    preconditionFailure("ChildCancellation: leave() found \(state) while waiting for a cancel")
                }
            }
            if settled { waiter.resume() }
        }
    }
}
