/// Where a backend's host task (the `stream` backend's) waits for work, guarded by the loop's
/// lock: one of the sub-machines ``LoopStateMachine`` composes.
///
/// A host parks its continuation here, in the same lock as the drain role, so that a sender
/// that finds the loop idle takes the role and the parked host in one lock round trip and
/// resumes it with its event after the lock, as a bare task parked on a continuation is
/// resumed (the `service` workload measures it). Everything else meant for the host (a
/// queue item to drain, a teardown, the end of its effects, the close of its mailbox) waits in
/// the backend's own mailbox; its poster then marks the slot (``post()``), so that a parked
/// host is woken to look there and a host that is about to park looks there first.
///
/// A backend with no host never parks one: the slot stays ``away`` and every transition below
/// is one comparison. Its transitions change it only as listed; one that makes no sense in its
/// state traps, naming the state and the transition.
@usableFromInline
enum HostSlot<Event: Sendable>: Sendable {
    /// The host is not parked here: it runs, has not started, or has gone.
    case away
    /// Something was posted to the host's mailbox since it last looked: it looks there before
    /// parking.
    case mail
    /// The host waits for its next wake-up.
    case parked(UnsafeContinuation<HostWake<Event>, Never>)

    /// The host parks, unless mail came since it last looked (then it looks first, and the slot
    /// forgets the mail: what the host finds in its mailbox is all there is to find).
    @inlinable
    mutating func park(_ host: UnsafeContinuation<HostWake<Event>, Never>) -> Bool {
        switch self {
        case .away:
            self = .parked(host)
            return true
        case .mail:
            self = .away
            return false
        case .parked:
            invalid("park(_:)")
        }
    }

    /// Something was posted to the host's mailbox: the parked host, if any, to resume (with
    /// ``HostWake/mail``) after the lock.
    @inlinable
    mutating func post() -> UnsafeContinuation<HostWake<Event>, Never>? {
        guard case .parked(let host) = self else {
            self = .mail
            return nil
        }
        self = .away
        return host
    }

    /// A sender has just taken the drain role with an event in hand: the parked host, if any,
    /// to resume with it after the lock. Always inlined: it is on every send that finds the loop
    /// idle, on every backend (W1 on `callback` measures it).
    @inlinable
    @inline(__always)
    mutating func takeForEvent() -> UnsafeContinuation<HostWake<Event>, Never>? {
        guard case .parked(let host) = self else { return nil }
        self = .away
        return host
    }

    @usableFromInline
    var stateName: String {
        switch self {
        case .away: "away"
        case .mail: "mail"
        case .parked: "parked"
        }
    }

    @usableFromInline
    func invalid(_ transition: StaticString) -> Never {
        preconditionFailure("HostSlot.\(transition) in state \(stateName): a host parks once, and only itself")
    }
}

/// What wakes a parked host (see ``HostSlot``).
@usableFromInline
enum HostWake<Event: Sendable>: Sendable {
    /// A sender found the loop idle and took the drain role for the host, with this event in
    /// hand: the host reduces it first, then drains (``LoopEngine/drainPass(_:event:from:releaseWhenEmpty:budget:)``).
    case event(Event, EffectHandle?)
    /// Look in the mailbox: something was posted there, or the host resumed itself because its
    /// pass could not park it.
    case mail
}
