/// The `stream` host's inbox for everything but an idle loop's wake-up by one event, and who
/// hosts the loop: the drain role's signal when it could not go to a parked host (a queue item
/// to drain, a teardown, an event sent while the host was not parked), the wake-up the last
/// running effect sends, the close of a host whose task was cancelled, and the host's own
/// state. A value under the driver's one lock (``StreamDriver/mailbox``), so that an idle loop
/// keeps neither an object nor a lock of its own for it.
///
/// The host does not wait here: it parks in the loop's own lock (``HostSlot``), where a sender
/// that finds the loop idle takes the drain role and the parked host at once. Whoever posts
/// here then tells the engine (``LoopEngine/postedToHost()``), which wakes a parked host to look
/// here, or makes a host about to park look here first.
///
/// It behaves as the stream consumed by the host once did: once the host's task is cancelled,
/// ``take()`` hands out what is pending and then ``Mail/closed``, and a signal posted from then
/// on is handed to whoever runs the state's owner next (``post(_:)``). Its transitions change
/// it only as listed; one that makes no sense in its state traps, naming it.
@usableFromInline
struct HostMailbox<State: Sendable, Event: Sendable>: Sendable {
    @usableFromInline typealias Signal = StreamDriver<State, Event>.Signal

    /// Who runs the state's owner: nobody yet, the host, or — once the host has ended, which
    /// happens only when its task was cancelled before the loop was torn down — the holder of
    /// the drain role, on the spot. A signal posted once the mailbox is closed is handed over
    /// here, so that exactly one party handles it.
    @usableFromInline
    enum Hosting: Sendable {
        case unhosted
        case hosted
        /// The host is leaving; it handles this signal, posted after the close, before it goes.
        case leaving(Signal?)
        case ended
    }

    /// The drain role's signal: a drain or a teardown.
    @usableFromInline private(set) var signal: Signal?
    /// ``StreamDriver/Signal/childrenEnded`` is pending. Wake-ups need no count: the host only
    /// looks again at how many effects run.
    @usableFromInline private(set) var childrenEnded = false
    /// The host's task was cancelled, or the host finished: nothing is taken any more.
    @usableFromInline private(set) var closed = false
    @usableFromInline private(set) var hosting = Hosting.unhosted

    @inlinable
    init() {}

    /// What becomes of a posted signal.
    @usableFromInline
    enum Post {
        /// Kept for the host: the caller tells the engine (``LoopEngine/postedToHost()``).
        case posted
        /// The mailbox is closed and the host is leaving: it handles the signal before it goes.
        case handedOver
        /// The mailbox is closed and the host has gone: the caller handles the signal itself.
        case handleHere
    }

    /// Posts the drain role's `signal` (at most one is ever in flight).
    @inlinable
    mutating func post(_ signal: Signal) -> Post {
        guard closed else {
            precondition(
                self.signal == nil, "HostMailbox.post(_:): a second drain-role signal was posted; only one is ever in flight")
            self.signal = signal
            return .posted
        }
        switch hosting {
        case .hosted, .leaving(nil):
            hosting = .leaving(signal)
            return .handedOver
        case .ended:
            return .handleHere
        case .unhosted, .leaving(.some):
            invalid("post(_:)")
        }
    }

    /// The last running effect ended; `false` once the mailbox is closed (nothing to wake).
    @inlinable
    mutating func postChildrenEnded() -> Bool {
        if closed { return false }
        childrenEnded = true
        return true
    }

    /// What the host finds when it looks.
    @usableFromInline
    enum Mail {
        case signal(Signal)
        /// Closed, and nothing is pending any more.
        case closed
        case empty
    }

    /// The next pending signal, the drain role's first; ``Mail/closed`` once the mailbox is
    /// closed and nothing is pending. Only the host calls it.
    @inlinable
    mutating func take() -> Mail {
        if let signal {
            self.signal = nil
            return .signal(signal)
        }
        if childrenEnded {
            childrenEnded = false
            return .signal(.childrenEnded)
        }
        return closed ? .closed : .empty
    }

    /// Refuses every later signal. The caller tells the engine, so that a parked host wakes
    /// and finds ``Mail/closed``.
    @inlinable
    mutating func close() {
        closed = true
    }

    /// Claims the host role; `false` if a host already has it or had it.
    @inlinable
    mutating func claimHost() -> Bool {
        guard case .unhosted = hosting else { return false }
        hosting = .hosted
        return true
    }

    /// The host leaves: the signal handed over to it meanwhile, to handle before it asks again;
    /// `nil` once it has gone, and the drain role's holder runs the state's owner from then on.
    @inlinable
    mutating func leave() -> Signal? {
        switch hosting {
        case .hosted, .leaving(nil):
            hosting = .ended
            return nil
        case .leaving(let signal?):
            hosting = .leaving(nil)
            return signal
        case .unhosted, .ended:
            invalid("leave()")
        }
    }

    @usableFromInline
    var stateName: String {
        switch hosting {
        case .unhosted: "unhosted"
        case .hosted: closed ? "hosted, closed" : "hosted"
        case .leaving(nil): "leaving"
        case .leaving(.some): "leaving with a signal"
        case .ended: "ended"
        }
    }

    @usableFromInline
    func invalid(_ transition: StaticString) -> Never {
        preconditionFailure("HostMailbox.\(transition) in state \(stateName): only one signal is ever in flight, and a host leaves once")
    }
}
