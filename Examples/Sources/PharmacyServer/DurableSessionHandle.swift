import FeedbackExamples
import FeedbackLoop
import FeedbackLoopDurable

/// One session's durable loop in this process: recovered from the journal by the first use,
/// recovered again after it failed (its lease was lost, an append was fenced), stopped by
/// ``close(closingTheSession:)``.
///
/// It also counts the requests using it, so that the entry of a session that is not open leaves
/// the registry only when no request is using it (see ``leave()``): a request that found the
/// session not open must never stop the loop another request is opening or reading.
final class DurableSessionHandle: Sendable, Hashable {
    struct Running: Sendable {
        let loop: DurableLoop<SessionState, SessionEvent>
        let keeper: Task<Void, Never>?
    }

    private enum Phase {
        case idle
        case recovering(Task<Running, any Error>)
        case running(Running)
        case closed
    }

    private struct Slot {
        var phase = Phase.idle
        /// Requests between ``enter()`` and ``leave()``.
        var users = 0
        /// Set once by the ``leave()`` that retires the handle; no request enters after it.
        var isRetired = false
        /// Requests waiting in ``waitUntilRemoved()``.
        var removalWaiters: [CheckedContinuation<Void, Never>] = []
        var isRemoved = false
        /// Whether a request is inside ``opening(_:)``, and the ones waiting to enter it.
        var isOpening = false
        var openingWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// Why a session has no loop.
    enum Unavailable: Error {
        /// The registry's entry ended (shutdown, expiry, retirement), or the loop stopped while
        /// the request used it.
        case closed
    }

    let id: String
    private let recover: @Sendable (String) async throws -> Running
    private let slot = LockedValue(Slot())

    init(id: String, recover: @escaping @Sendable (String) async throws -> Running) {
        self.id = id
        self.recover = recover
    }

    /// Counts a request in. `false` once the handle is retired: the request must wait for the
    /// entry to leave the registry (``waitUntilRemoved()``) and use the session's next entry.
    func enter() -> Bool {
        slot.withLock { slot in
            guard !slot.isRetired else { return false }
            slot.users += 1
            return true
        }
    }

    /// Counts a request out. Returns `true` when it was the last one and the session is not open
    /// here (its loop holds a closed session, or none could be recovered): the handle is then
    /// retired, and the caller must take its entry out of the registry (``retire(from:)``).
    /// Nothing can open the session meanwhile, since opening takes a request inside.
    func leave() -> Bool {
        slot.withLock { slot in
            slot.users -= 1
            guard slot.users == 0, !slot.isRetired else { return false }
            switch slot.phase {
            case .idle:
                slot.isRetired = true
            case .running(let running) where running.loop.isRunning && running.loop.state.pharmacies == nil:
                slot.isRetired = true
            case .running, .recovering, .closed:
                break
            }
            return slot.isRetired
        }
    }

    /// After ``leave()`` returned `true`, from inside the registry's use of this entry: stops
    /// the loop (which gives its lease back), takes the entry out of `registry`, and lets the
    /// requests that found the handle retired go on to the session's next entry.
    func retire(from registry: DurableSessions.Registry) async {
        _ = await close(closingTheSession: false)
        await registry.remove(id)
        let waiters = slot.withLock { slot in
            slot.isRemoved = true
            defer { slot.removalWaiters = [] }
            return slot.removalWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Runs `body` alone among the requests in ``opening(_:)`` here, in arrival order: a `PUT`'s
    /// look at whether the session is open and its ``SessionEvent/opened`` are one step, so that
    /// of racing `PUT`s exactly one says it opened the session. (Every open of a session goes
    /// through the one process that owns it, and there through its one handle.)
    func opening<T>(_ body: () async throws -> T) async rethrows -> T {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let entered = slot.withLock { slot -> Bool in
                guard slot.isOpening else {
                    slot.isOpening = true
                    return true
                }
                slot.openingWaiters.append(waiter)
                return false
            }
            if entered { waiter.resume() }
        }
        defer {
            // Handed to the next waiter, if any, without letting go in between.
            let next = slot.withLock { slot -> CheckedContinuation<Void, Never>? in
                guard !slot.openingWaiters.isEmpty else {
                    slot.isOpening = false
                    return nil
                }
                return slot.openingWaiters.removeFirst()
            }
            next?.resume()
        }
        return try await body()
    }

    /// Returns once a retired handle's entry has left the registry.
    func waitUntilRemoved() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let isRemoved = slot.withLock { slot in
                if !slot.isRemoved { slot.removalWaiters.append(waiter) }
                return slot.isRemoved
            }
            if isRemoved { waiter.resume() }
        }
    }

    /// The session's running loop, recovered now if there is none (or the last one failed).
    ///
    /// - Throws: what recovery throws (`JournalError.ownedElsewhere(loop:)` while another
    ///   server holds the session's lease); ``Unavailable/closed`` after ``close(closingTheSession:)``.
    func loop() async throws -> DurableLoop<SessionState, SessionEvent> {
        let task = slot.withLock { slot -> Task<Running, any Error>? in
            switch slot.phase {
            case .running(let running) where running.loop.isRunning:
                return nil
            case .recovering(let task):
                return task
            case .closed:
                return nil
            case .idle, .running:
                // A loop that stopped on its own (fenced, lease lost) is replaced: recovery takes
                // the session again if it can, or says who holds it.
                let task = Task { [id, recover] in try await recover(id) }
                slot.phase = .recovering(task)
                return task
            }
        }
        guard let task else {
            return try slot.withLock { slot in
                switch slot.phase {
                case .running(let running): return running.loop
                default: throw Unavailable.closed
                }
            }
        }
        let running: Running
        do {
            running = try await task.value
        } catch {
            slot.withLock { slot in
                if case .recovering = slot.phase { slot.phase = .idle }
            }
            throw error
        }
        let installed = slot.withLock { slot -> Bool in
            switch slot.phase {
            case .recovering:
                slot.phase = .running(running)
                return true
            case .running(let current):
                return current.loop === running.loop
            case .idle, .closed:
                return false
            }
        }
        guard installed else {
            // Closed while recovering: this loop must not outlive its entry.
            await Self.stop(running)
            throw Unavailable.closed
        }
        return running.loop
    }

    /// Stops the session's loop, if it has one (waiting for a recovery in progress); later uses
    /// throw ``Unavailable/closed``.
    ///
    /// - Parameter closingTheSession: `true` when the session itself ends (it expired): an open
    ///   session is closed in the journal first, so that it stays closed for every server; `false`
    ///   when only this process lets go of it (shutdown): it stays open in the journal.
    /// - Returns: The screen of the session as it ended here, if it was open: the state it was
    ///   closed with, or the state it had when this process let go of it.
    func close(closingTheSession: Bool) async -> Pharmacies.State? {
        let previous = slot.withLock { slot -> Phase in
            defer { slot.phase = .closed }
            return slot.phase
        }
        let running: Running
        switch previous {
        case .running(let current):
            running = current
        case .recovering(let task):
            guard let recovered = try? await task.value else { return nil }
            running = recovered
        case .idle, .closed:
            return nil
        }
        var screen = running.loop.state.pharmacies
        if closingTheSession, screen != nil, running.loop.isRunning {
            // If the append fails the session stays open in the journal, as after a crash.
            screen = (try? await running.loop.sendAndWait(.closed))?.finalScreen ?? screen
        }
        await Self.stop(running)
        return screen
    }

    /// Stops the loop, which gives its lease back. The lease keeper, if any, is left to end by
    /// itself at its next wake-up (it sees the loop stopped): cancelling it would make it stop
    /// the loop once more, in a cancelled task, and log the second release's `CancellationError`.
    private static func stop(_ running: Running) async {
        await running.loop.stop()
    }

    static func == (lhs: DurableSessionHandle, rhs: DurableSessionHandle) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
