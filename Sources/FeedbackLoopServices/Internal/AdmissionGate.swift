#if Services
import FeedbackLoop

/// Decides, for a ``LoopService``, whether an event may still enter the loop, and tells the
/// service's `run()` when and why to stop.
///
/// The gate is the service's "draining" mode, kept outside the core: while it is open every
/// sender passes through ``enter()``/``leave()``; once a stop is requested it refuses (and counts)
/// new senders, and ``waitUntilEmpty()`` returns when every sender that got in has left — so an
/// event accepted just before the gate closed is already queued in the loop when the service
/// starts waiting for the loop to go idle.
///
/// Nothing is resumed inside the lock: each transition returns the continuations to resume.
final class AdmissionGate: Sendable {
    /// Why the service's `run()` was asked to stop. The first request wins.
    enum StopRequest: Sendable, Equatable {
        case gracefulShutdown
        case cancelled
        case loopStopped
    }

    private enum Phase {
        /// `run()` has not started; events are accepted (they wait in the loop's queue).
        case open
        /// A stop was requested; new events are refused.
        case closed(StopRequest)
    }

    private struct State {
        var phase = Phase.open
        var hasRun = false
        /// Senders between a successful ``enter()`` and their ``leave()``.
        var inside = 0
        var refused = 0
        var stopWaiters: [CheckedContinuation<StopRequest, Never>] = []
        var emptyWaiter: CheckedContinuation<Void, Never>?
    }

    // The core's `Lock`, not `Synchronization.Mutex`: the same speed, and under `-DTSAN` a
    // pthread mutex that ThreadSanitizer understands (it misreads `Mutex` under contention).
    private let state = Lock(State())

    /// Marks the gate as used by a `run()`; `false` if a `run()` already did.
    func claimRun() -> Bool {
        state.withLock { state in
            defer { state.hasRun = true }
            return !state.hasRun
        }
    }

    /// What ``enter()`` decided.
    enum Admission {
        case admitted
        /// Refused and counted; `isFirst` for the first refusal, which the service logs.
        case refused(isFirst: Bool)
    }

    /// Lets a sender in, or refuses and counts it once a stop was requested.
    @inline(__always)
    func enter() -> Admission {
        state.withLock { state in
            guard case .open = state.phase else {
                state.refused += 1
                return .refused(isFirst: state.refused == 1)
            }
            state.inside += 1
            return .admitted
        }
    }

    /// Called by every sender that ``enter()`` let in, once its event is in the loop (or refused
    /// by it).
    @inline(__always)
    func leave() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.inside -= 1
            guard state.inside == 0, case .closed = state.phase else { return nil }
            defer { state.emptyWaiter = nil }
            return state.emptyWaiter
        }
        waiter?.resume()
    }

    /// Closes the gate for `reason` unless it is already closed, and wakes every
    /// ``waitForStopRequest()``. Safe to call from any thread, including a graceful-shutdown or
    /// cancellation handler.
    func requestStop(_ reason: StopRequest) {
        let waiters = state.withLock { state -> [CheckedContinuation<StopRequest, Never>] in
            guard case .open = state.phase else { return [] }
            state.phase = .closed(reason)
            defer { state.stopWaiters = [] }
            return state.stopWaiters
        }
        for waiter in waiters { waiter.resume(returning: reason) }
    }

    /// Returns the first stop request, waiting for one if none came yet.
    func waitForStopRequest() async -> StopRequest {
        await withCheckedContinuation { (waiter: CheckedContinuation<StopRequest, Never>) in
            let reason = state.withLock { state -> StopRequest? in
                if case .closed(let reason) = state.phase { return reason }
                state.stopWaiters.append(waiter)
                return nil
            }
            if let reason { waiter.resume(returning: reason) }
        }
    }

    /// Returns once the gate is closed and no sender is inside. One caller at a time.
    func waitUntilEmpty() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let empty = state.withLock { state -> Bool in
                if case .closed = state.phase, state.inside == 0 { return true }
                state.emptyWaiter = waiter
                return false
            }
            if empty { waiter.resume() }
        }
    }

    var isOpen: Bool {
        state.withLock { state in
            if case .open = state.phase { return true }
            return false
        }
    }

    var refused: Int {
        state.withLock { $0.refused }
    }
}
#endif
