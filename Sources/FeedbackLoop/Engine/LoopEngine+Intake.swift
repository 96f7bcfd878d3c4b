import Instrumentation
import Logging

// Intake: events, `sendAndWait` and observers enter through the lock-guarded queue; the caller
// that finds the loop idle takes the drain role and hands it to the backend.

extension LoopEngine {
    /// Lets the feedbacks see the initial state. Called once, right after init.
    @inlinable
    func start() {
        driver.start(self, hosting: configuration.hosting)
        let action = lock.withLock { $0.enqueue(.start, external: false) }
        perform(action, event: nil)
    }

    @inlinable
    func receive(_ event: Event, from handle: EffectHandle?) {
        if cause != nil {
            receiveTraced(event, from: handle)
            return
        }
        let action = lock.withLock { $0.send(event, from: handle) }
        switch action {
        case .reduce(let host?):
            host.resume(returning: .event(event, handle))
        case .reduce(nil):
            driver.drain(self, event: event, from: handle)
        case .queued:
            return
        case .dropped(let reason, let firstWarning):
            reportDrop(event, reason: reason, firstWarning: firstWarning)
        }
    }

    /// ``Loop/send(contentsOf:)``: the events enter in one transition
    /// (``LoopStateMachine/send(contentsOf:)``); the caller that finds the loop idle takes the
    /// drain role with the first in hand, as ``receive(_:from:)`` does, and the holder finds the
    /// others queued behind it. Drops are reported first, after the lock, in order.
    @inlinable
    func receive(contentsOf events: [Event]) {
        if events.isEmpty { return }
        if cause != nil {
            receiveTraced(contentsOf: events)
            return
        }
        let action = lock.withLock { $0.send(contentsOf: events) }
        switch action {
        case .reduce(let host, let dropped):
            if let dropped { reportDrops(of: events, dropped) }
            if let host {
                host.resume(returning: .event(events[0], nil))
            } else {
                driver.drain(self, event: events[0], from: nil)
            }
        case .queued(let dropped):
            if let dropped { reportDrops(of: events, dropped) }
        case .dropped(let dropped):
            reportDrops(of: events, dropped)
        }
    }

    /// ``receive(contentsOf:)`` for a loop that propagates `ServiceContext`: every event of the
    /// batch carries the sender's context, as each of its `send`s would.
    @inlinable
    @inline(never)
    func receiveTraced(contentsOf events: [Event]) {
        let cause = EventCause<State>(context: ServiceContext.current, handle: nil, reply: nil)
        let items = events.map { QueueItem<State, Event>.traced($0, cause) }
        let action = lock.withLock { $0.enqueue(contentsOf: items) }
        switch action {
        case .reduce(_, let dropped):
            if let dropped { reportDrops(of: events, dropped) }
            driver.drain(self, startingWith: items[0])
        case .queued(let dropped):
            if let dropped { reportDrops(of: events, dropped) }
        case .dropped(let dropped):
            reportDrops(of: events, dropped)
        }
    }

    @usableFromInline
    func reportDrops(of events: [Event], _ dropped: LoopStateMachine<State, Event>.DroppedTail) {
        for index in dropped.from ..< events.count {
            reportDrop(events[index], reason: dropped.reason, firstWarning: dropped.firstWarning && index == dropped.from)
        }
    }

    /// Something was posted to the host's mailbox (see ``HostSlot``): wakes the host if it is
    /// parked.
    @inlinable
    func postedToHost() {
        lock.withLock { $0.postToHost() }?.resume(returning: .mail)
    }

    /// The host parks, unless mail came since it last looked (see ``HostSlot/park(_:)``).
    @inlinable
    func parkHost(_ continuation: UnsafeContinuation<HostWake<Event>, Never>) -> Bool {
        lock.withLock { $0.parkHost(continuation) }
    }

    @inlinable
    func perform(_ action: LoopStateMachine<State, Event>.EnqueueAction, event: Event?) {
        switch action {
        case .queued:
            return
        case .drain(let item):
            driver.drain(self, startingWith: item)
        case .dropped(let reason, let firstWarning):
            reportDrop(event, reason: reason, firstWarning: firstWarning)
        }
    }

    @usableFromInline
    func reportDrop(_ event: Event?, reason: DropReason, firstWarning: Bool) {
        if let event { instrumentation?.hooks.onDrop?(event, reason) }
        guard firstWarning else { return }
        switch reason {
        case .afterStop:
            configuration.logger.warning(
                "event sent after the loop stopped was dropped; later ones are counted in statistics",
                metadata: ["loop": "\(configuration.label)"])
        case .overCapacity:
            configuration.logger.warning(
                "event queue full; events are being dropped and counted in statistics",
                metadata: ["loop": "\(configuration.label)", "capacity": "\(configuration.capacity.limit)"])
        case .fromCancelledEffect, .discardedAtStop, .cancelledWhileWaiting:
            break
        }
    }

    /// Adds an observer through the queue, so that it sees the current state first and then
    /// every later one, none skipped. Returns its id, or `nil` if the loop had stopped (then the
    /// observer has already had the final state and its stop).
    @inlinable
    func addObserver(onState: @escaping @Sendable (State) -> Void, onStop: (@Sendable () -> Void)?) -> Int? {
        let action = lock.withLock { $0.addObserver(onState: onState, onStop: onStop) }
        switch action {
        case .enqueued(let id, let enqueue):
            perform(enqueue, event: nil)
            return id
        case .stopped(let final):
            onState(final)
            onStop?()
            return nil
        case .awaitingTeardown:
            return nil
        }
    }

    @inlinable
    func removeObserver(_ id: Int) {
        let action = lock.withLock { $0.removeObserver(id) }
        perform(action, event: nil)
    }

    /// ``Loop/sendAndWait(_:)``. A call that waits for room in a full bounded queue is parked;
    /// cancelling its task takes it out of line (``LoopStateMachine/unpark(id:)`` counts the drop)
    /// and resumes it with ``LoopError/cancelled``, and the drop is reported here, in the
    /// caller's own task and context, before the call throws.
    @inlinable
    func submit(_ event: Event) async throws -> State {
        do {
            return try await submitOrPark(event)
        } catch let error as LoopError where error == .cancelled {
            // Only an unparked call is resumed with `.cancelled`.
            reportDrop(event, reason: .cancelledWhileWaiting, firstWarning: false)
            throw error
        }
    }

    @inlinable
    func submitOrPark(_ event: Event) async throws -> State {
        let id = nextID()
        let context = cause != nil ? ServiceContext.current : nil
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (reply: UnsafeContinuation<State, any Error>) in
                let traced = cause.map { _ in EventCause(context: context, handle: nil, reply: reply) }
                let action = lock.withLock { $0.submit(event, id: id, reply: reply, cause: traced) }
                switch action {
                case .queued:
                    break
                case .drain(let item):
                    driver.drain(self, startingWith: item)
                case .parked:
                    // Cancelled before the handler could see the parked call: unpark it here.
                    if Task.isCancelled, let parked = lock.withLock({ $0.unpark(id: id) }) {
                        parked.reply.resume(throwing: LoopError.cancelled)
                    }
                case .stopped:
                    reportDrop(event, reason: .afterStop, firstWarning: false)
                    reply.resume(throwing: LoopError.stopped)
                }
            }
        } onCancel: {
            if let parked = lock.withLock({ $0.unpark(id: id) }) {
                parked.reply.resume(throwing: LoopError.cancelled)
            }
        }
    }
}
