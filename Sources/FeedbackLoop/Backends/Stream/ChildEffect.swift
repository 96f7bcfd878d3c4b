/// A `.run` effect on the `stream` backend, waiting for the host to add it to the loop's task
/// group. Made while the state's owner handles an event (see ``LoopEngine/start(_:feedback:)``), where
/// no task group is in reach; the host adds it as soon as the drain pass ends.
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

    /// The child task's work: the effect's body in a grandchild, so that the loop can cancel this
    /// one effect — a task group cancels all its children or none, and a child task has no handle
    /// to cancel it by. The child waits for whichever comes first, the body's end or the loop's
    /// cancel, then cancels the grandchild (a no-op when the body ended). Cancelling the host's
    /// task cancels both at once, as structured concurrency does.
    @inlinable
    func run<State: Sendable>(in engine: LoopEngine<State, Event>) async {
        await withDiscardingTaskGroup { group in
            group.addTask {
                var failure: (any Error)?
                do {
                    try await EffectMarker.inside(marker) { try await body(sink) }
                } catch {
                    failure = error
                }
                // Cancelled with the whole tree (the host's task was: its `run()` caller), not by
                // the loop: the loop's stop is on its way and would find the effect already
                // ended. It is cancelled all the same, and counted so, as on every backend.
                if Task.isCancelled { engine.cancel(handle) }
                engine.taskReturned(handle, error: failure)
                cancellation.signal()
            }
            await cancellation.wait()
            group.cancelAll()
        }
    }
}

/// The signal that ends a ``ChildEffect``'s wait: sent by the loop when it cancels the effect, and
/// by the effect's body when it ends. Signalled once; later signals do nothing.
@usableFromInline
final class ChildCancellation: Sendable {
    @usableFromInline
    enum State {
        case idle
        case waiting(UnsafeContinuation<Void, Never>)
        case signalled
    }

    @usableFromInline let state = Lock<State>(.idle)

    @inlinable
    init() {}

    @inlinable
    func signal() {
        let waiter: UnsafeContinuation<Void, Never>? = state.withLock { state in
            switch state {
            case .idle:
                state = .signalled
                return nil
            case .waiting(let continuation):
                state = .signalled
                return continuation
            case .signalled:
                return nil
            }
        }
        waiter?.resume()  // after the lock: resuming schedules the waiting task
    }

    /// Returns once ``signal()`` has been called. Only the effect's own child task waits, once.
    @inlinable
    func wait() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let signalled: Bool = state.withLock { state in
                switch state {
                case .idle:
                    state = .waiting(continuation)
                    return false
                case .signalled:
                    return true
                case .waiting:
                    preconditionFailure("ChildCancellation: waited for twice; only the effect's own child task waits")
                }
            }
            if signalled { continuation.resume() }
        }
    }
}
