/// The callers waiting for the loop: for it to be idle (or, a test's wait, for its next
/// progress), and for it to stop. One of the sub-machines ``LoopStateMachine`` composes, guarded
/// by the loop's lock.
///
/// Stop waiters exist until the loop has stopped: ``releaseStopWaiters()`` hands the last of them
/// out and no one waits for a stop after that (``LoopStateMachine/waitForStop(_:)`` lets a caller
/// go at once), so their list is the payload of the one state that has it. Its fields change only
/// through the transitions below (their setters are private to this file); a transition that
/// makes no sense in its state traps, naming the state and the transition.
@usableFromInline
struct Waiting: Sendable {
    /// Callers of ``Loop/waitUntilIdle()``, and of a test's wait for its own condition: one list,
    /// so that the drain checks one count on its way to idle.
    @usableFromInline private(set) var waiters: [Waiter] = []
    @usableFromInline private(set) var stop = StopWaiters.waiting([])

    @usableFromInline
    enum StopWaiters: Sendable {
        /// Callers of ``Loop/stop()`` or ``Loop/run()`` waiting for every effect to end.
        case waiting([StopWaiter])
        /// The loop stopped, and every one of them was let go.
        case released
        /// Only inside a transition, while it changes the list in place: with the list out of the
        /// enum, the array is not shared and appending to it copies nothing.
        case modifying
    }

    @inlinable
    init() {}

    @inlinable
    var hasWaiters: Bool { !waiters.isEmpty }

    @inlinable
    mutating func add(_ waiter: Waiter) {
        waiters.append(waiter)
    }

    /// The waiters to resume at the loop's progress: every one waiting for progress, and, if the
    /// loop is `idle`, those waiting for idle.
    @inlinable
    mutating func takeReady(idle: Bool) -> [CheckedContinuation<Void, Never>] {
        var ready: [CheckedContinuation<Void, Never>] = []
        waiters.removeAll { waiter in
            guard idle || !waiter.untilIdle else { return false }
            ready.append(waiter.continuation)
            return true
        }
        return ready
    }

    @inlinable
    mutating func addStopWaiter(_ waiter: StopWaiter) {
        guard case .waiting(var list) = stop else { invalid("addStopWaiter(_:)") }
        stop = .modifying
        list.append(waiter)
        stop = .waiting(list)
    }

    /// A stop waiter gave up (its bound passed): it leaves the list, if still there.
    @inlinable
    mutating func cancelStopWait(id: UInt64) -> StopWaiter? {
        guard case .waiting(var list) = stop, let index = list.firstIndex(where: { $0.id == id }) else { return nil }
        stop = .modifying
        let waiter = list.remove(at: index)
        stop = .waiting(list)
        return waiter
    }

    /// Only the effect `effect` is left, and callers of stop inside it wait for every effect but
    /// their own: they may go.
    @inlinable
    mutating func releaseStopWaiters(runningIn effect: UInt64) -> [StopWaiter] {
        guard case .waiting(var list) = stop, list.contains(where: { $0.except == effect }) else { return [] }
        stop = .modifying
        let released = list.filter { $0.except == effect }
        list.removeAll { $0.except == effect }
        stop = .waiting(list)
        return released
    }

    /// The loop has stopped: every stop waiter may go, and none waits from now on.
    @inlinable
    mutating func releaseStopWaiters() -> [StopWaiter] {
        guard case .waiting(let list) = stop else { invalid("releaseStopWaiters()") }
        stop = .released
        return list
    }

    @usableFromInline
    var stateName: String {
        switch stop {
        case .waiting: "waiting"
        case .released: "released"
        case .modifying: "modifying"
        }
    }

    @usableFromInline
    func invalid(_ transition: StaticString) -> Never {
        preconditionFailure("Waiting.\(transition) in state \(stateName): the loop has stopped, and no one waits for its stop")
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
