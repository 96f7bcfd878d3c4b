/// The `stream` host's inbox for everything but an idle loop's wake-up by one event: the drain
/// role's signal when it could not go to a parked host (a queue item to drain, a teardown, an
/// event sent while the host was not parked), the wake-up the last running effect sends, and
/// the close of a host whose task was cancelled.
///
/// The host does not wait here: it parks in the loop's own lock (``HostSlot``), where a sender
/// that finds the loop idle takes the drain role and the parked host at once. Whoever posts
/// here then tells the engine (``LoopEngine/postedToHost()``), which wakes a parked host to look
/// here, or makes a host about to park look here first.
///
/// It behaves as the stream consumed by the host once did: once the host's task is cancelled,
/// ``take()`` hands out what is pending and then ``Mail/closed``, and ``post(_:)`` refuses from
/// then on, so that the driver hands a refused signal to whoever runs the state's owner next
/// (see ``StreamDriver/send(_:_:)``).
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
        /// The host's task was cancelled, or the host finished: nothing is taken any more.
        @usableFromInline var closed = false

        @inlinable
        init() {}
    }

    /// What the host finds when it looks.
    @usableFromInline
    enum Mail {
        case signal(Signal)
        /// Closed, and nothing is pending any more.
        case closed
        case empty
    }

    /// Inline rather than a `Lock` object: a parked idle loop would keep a second allocation.
    @usableFromInline let contents = InlineLock(Contents())

    @inlinable
    init() {}

    /// Keeps `signal` for the host; `false` if the mailbox is closed (the host's task was
    /// cancelled, or the host finished). The caller then tells the engine
    /// (``LoopEngine/postedToHost()``).
    @inlinable
    func post(_ signal: Signal) -> Bool {
        contents.withLock { contents in
            if contents.closed { return false }
            if case .childrenEnded = signal {
                contents.childrenEnded = true
            } else {
                precondition(
                    contents.signal == nil, "HostMailbox: a second drain-role signal was posted; only one is ever in flight")
                contents.signal = signal
            }
            return true
        }
    }

    /// The next pending signal, the drain role's first; ``Mail/closed`` once the mailbox is
    /// closed and nothing is pending. Only the host calls it.
    @inlinable
    func take() -> Mail {
        contents.withLock { contents in
            if let signal = contents.signal {
                contents.signal = nil
                return .signal(signal)
            }
            if contents.childrenEnded {
                contents.childrenEnded = false
                return .signal(.childrenEnded)
            }
            return contents.closed ? .closed : .empty
        }
    }

    /// Refuses every later signal. The caller tells the engine, so that a parked host wakes
    /// and finds ``Mail/closed``.
    @inlinable
    func close() {
        contents.withLock { $0.closed = true }
    }
}
