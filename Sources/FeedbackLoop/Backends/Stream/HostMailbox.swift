/// The `stream` host's inbox: the signal the drain role's holder sends (at most one in flight),
/// the wake-up the last running effect sends, and the host parked on a continuation while both
/// are empty.
///
/// An `AsyncStream` did this job before. A service's sparse loop pays the whole hand-off on every
/// event, and a stream's producer-to-consumer hand-off costs several times a continuation's (the
/// `service` scenario and the callgrind `service` workload measure it).
///
/// It behaves as the stream consumed by the host did: once the host's task is cancelled,
/// ``next()`` returns what is pending and then `nil`, and ``post(_:)`` refuses from then on, so
/// that the driver hands a refused signal to whoever runs the state's owner next (see
/// ``StreamDriver/send(_:_:)``).
@usableFromInline
final class HostMailbox<State: Sendable, Event: Sendable>: Sendable {
    @usableFromInline typealias Signal = StreamDriver<State, Event>.Signal

    @usableFromInline
    struct Contents: Sendable {
        /// The drain role's signal: a drain or a teardown.
        @usableFromInline var signal: Signal?
        /// ``StreamDriver/Signal/childrenEnded`` is pending. Wake-ups need no count: the host
        /// only looks again at how many effects run.
        @usableFromInline var childrenEnded = false
        @usableFromInline var host: UnsafeContinuation<Signal?, Never>?
        /// The host's task was cancelled, or the host finished: nothing is taken any more.
        @usableFromInline var closed = false

        @inlinable
        init() {}
    }

    /// Inline rather than a `Lock` object: a parked idle loop would keep a second allocation.
    @usableFromInline let contents = InlineLock(Contents())

    @inlinable
    init() {}

    /// Hands `signal` to the host; `false` if the mailbox is closed (the host's task was
    /// cancelled, or the host finished).
    @inlinable
    func post(_ signal: Signal) -> Bool {
        let (accepted, host): (Bool, UnsafeContinuation<Signal?, Never>?) = contents.withLock { contents in
            if contents.closed { return (false, nil) }
            if let host = contents.host {
                contents.host = nil
                return (true, host)
            }
            if case .childrenEnded = signal {
                contents.childrenEnded = true
            } else {
                precondition(
                    contents.signal == nil, "HostMailbox: a second drain-role signal was posted; only one is ever in flight")
                contents.signal = signal
            }
            return (true, nil)
        }
        host?.resume(returning: signal)  // after the lock: resuming schedules the host
        return accepted
    }

    /// The next signal; `nil` once the mailbox is closed (after what was pending). Only the host
    /// calls it, one call at a time.
    ///
    /// With `cancellable`, cancelling the calling task closes the mailbox, as it ended the
    /// stream: for a host in a task someone can cancel (``Loop/run()``'s caller, or `stop()`'s
    /// hosting a teardown). A host in a task of its own, whose handle nobody holds, waits
    /// without the cancellation handler, which costs a status record on every wait. Runs where
    /// the host runs (see ``StreamDriver/obey(_:_:startChildren:)``).
    @inlinable
    @inline(__always)
    nonisolated(nonsending)
    func next(cancellable: Bool) async -> Signal? {
        guard cancellable else { return await take() }
        return await withTaskCancellationHandler {
            await take()
        } onCancel: {
            close()
        }
    }

    @inlinable
    @inline(__always)
    nonisolated(nonsending)
    func take() async -> Signal? {
        await withUnsafeContinuation { (host: UnsafeContinuation<Signal?, Never>) in
            let ready: Signal?? = contents.withLock { contents in
                if let signal = contents.signal {
                    contents.signal = nil
                    return .some(signal)
                }
                if contents.childrenEnded {
                    contents.childrenEnded = false
                    return .some(.childrenEnded)
                }
                if contents.closed { return .some(nil) }
                contents.host = host
                return nil
            }
            if let ready { host.resume(returning: ready) }
        }
    }

    /// Refuses every later signal, and wakes a waiting host with `nil`.
    @inlinable
    func close() {
        let host: UnsafeContinuation<Signal?, Never>? = contents.withLock { contents in
            contents.closed = true
            defer { contents.host = nil }
            return contents.host
        }
        host?.resume(returning: nil)
    }
}
