import Instrumentation
import Synchronization

// The drain: what the holder of the drain role does with the state's owner, wherever its backend
// runs it — one event in place, or pass after pass over the queue — and what stop leaves undone.

extension LoopEngine {
    /// Queue items a backend that shares its thread (the actor, the stream's host, on a pool of
    /// one thread per CPU) handles before it yields: ~50–100 µs of a light reducer, so that a
    /// yield (about a microsecond) costs the loop about 1 % while other tasks wait at most one turn.
    @inlinable
    static var turnBudget: Int { 1_024 }

    /// Whether an empty batch buffer is worth keeping for the next drain (see
    /// ``LoopStateMachine/keptQueueCapacity``).
    @inlinable
    static func keeps(_ buffer: [QueueItem<State, Event>]) -> Bool {
        buffer.capacity <= LoopStateMachine<State, Event>.keptQueueCapacity
    }

    /// The sender found the loop idle and holds the drain role with `event` in hand (the
    /// `callback` backend): reduces it here, with no queue item, then publishes the state and
    /// releases the role in one lock — or, if events arrived meanwhile, drains them too.
    @inlinable
    func reduceInPlace(_ owner: StateOwner<State, Event>, event: Event, from handle: EffectHandle?) {
        if stopRequested.load(ordering: .relaxed) {
            discard(CollectionOfOne(.event(event, handle)))
        } else {
            owner.receive(event, from: handle, engine: self)
        }
        let counts = owner.takeCounts()
        var retired: State?
        let end = lock.withLock {
            $0.finishInPlace(
                state: owner.state, reduced: counts.reduced, droppedFromCancelledEffects: counts.dropped,
                retired: &retired)
        }
        retired = nil  // after the lock: see `drainPass`
        switch end {
        case .released:
            return
        case .releasedWaking(let waiters):
            for waiter in waiters { waiter.resume() }
        case .drainMore:
            drainPass(owner, first: nil)
        case .tearDown:
            tearDown(owner)
        case .keepRole, .pause:
            preconditionFailure("LoopEngine.reduceInPlace: finishInPlace kept the role (\(end)); it never does")
        }
    }

    /// Handles `first`, then batch after batch until the queue is empty or stop begins. Runs in
    /// the drain role only, so it may touch `owner`. With `releaseWhenEmpty: false` the holder
    /// keeps the role when it finds the queue empty, to look again shortly (a second look, after
    /// a yield: a sender in flow refills the queue meanwhile, and one wake-up serves the burst) —
    /// unless the queue was empty from the start and the loop's last second look found nothing.
    /// That is a loop woken by one event at a time (a service's sessions), where a second look
    /// costs a second scheduling of the holder for nothing (the `service` scenario and workload
    /// measure it); events arriving during a pass, or a second look that pays, bring the second
    /// look back (see ``StateOwner/secondLookPays``). Once it has handled
    /// `budget` items it pauses at the end of the batch, keeping the role: a holder that shares
    /// its thread (the actor, on a pool of one thread per CPU) gives way to other work there.
    @inlinable
    @discardableResult
    func drainPass(
        _ owner: StateOwner<State, Event>,
        first: QueueItem<State, Event>?,
        releaseWhenEmpty: Bool = true,
        budget: Int = .max
    ) -> DrainEnd {
        if let first {
            // The initial state reaches every feedback even when the loop is stopped before its
            // first drain (a backend whose drain runs later than `Loop.init`: a stop that comes
            // first would otherwise leave the feedbacks without it); teardown then cancels what
            // they started.
            if case .start = first {
                owner.process(first, engine: self)
            } else if stopRequested.load(ordering: .relaxed) {
                discard(CollectionOfOne(first))
            } else {
                owner.process(first, engine: self)
            }
        }
        return drainQueue(owner, woken: first != nil, releaseWhenEmpty: releaseWhenEmpty, budget: budget)
    }

    /// ``drainPass(_:first:releaseWhenEmpty:budget:)`` for a holder woken with one event in hand
    /// (``LoopDriver/drain(_:event:from:)``): the event is reduced as it came, never wrapped in a
    /// queue item. A loop woken one event at a time pays the wrapping on every event, and an
    /// optional queue item is copied and destroyed through the run-time's value witnesses, not
    /// inline (the `service` workload measures it). Keeps the role for a second look as a woken
    /// pass does (see ``drainPass(_:first:releaseWhenEmpty:budget:)``), unless `releaseWhenEmpty`.
    ///
    /// With `parking`, the continuation of a host that waits for its next wake-up once this pass
    /// is over (the `stream` host): the lock that releases the role parks it too, when it can
    /// (``LoopStateMachine/parkHostAfterPass(_:)``), and the pass ends ``DrainEnd/parked``. A
    /// loop woken one event at a time then takes one lock per wake-up on each side, as a bare
    /// task parked on a continuation does (the `service` workload measures it).
    @inlinable
    func drainPass(
        _ owner: StateOwner<State, Event>, event: Event, from handle: EffectHandle?, releaseWhenEmpty: Bool = false, budget: Int,
        parking: UnsafeContinuation<HostWake<Event>, Never>? = nil
    ) -> DrainEnd {
        if stopRequested.load(ordering: .relaxed) {
            discard(CollectionOfOne(.event(event, handle)))
        } else {
            owner.receive(event, from: handle, engine: self)
        }
        return drainQueue(owner, woken: true, releaseWhenEmpty: releaseWhenEmpty, budget: budget, parking: parking)
    }

    /// The batches of a drain pass, once the item or event it was woken with (`woken`) is handled.
    ///
    /// The owner's spare buffer is swapped with the queue in place, under the lock, and taken out
    /// into `batch` only at the pass's first batch with items: a pass that finds the queue empty,
    /// the whole pass of a loop woken one event at a time, moves no buffer and touches no
    /// reference count (the `service` workload measures it), and a pass of many batches moves it
    /// once (W2, ping-pong, one item a batch, measures it).
    @inlinable
    func drainQueue(
        _ owner: StateOwner<State, Event>, woken: Bool, releaseWhenEmpty: Bool, budget: Int,
        parking: UnsafeContinuation<HostWake<Event>, Never>? = nil
    ) -> DrainEnd {
        var handled = 0
        var parked = false
        var batch: [QueueItem<State, Event>] = []
        // Whether `batch` holds the owner's spare buffer, which goes back to the owner as the
        // pass ends.
        var holdsSpare = false
        while true {
            // Everything this pass does to `owner` happens before the lock below: once
            // `finishBatch` releases the drain role, another thread may hold the state's owner.
            let counts = owner.takeCounts()
            var retired: State?
            let action = lock.withLock { state in
                let releasesWhenEmpty = releaseWhenEmpty || (handled == 0 && !owner.secondLookPays)
                let action =
                    holdsSpare
                    ? state.finishBatch(
                        &batch, state: owner.state, reduced: counts.reduced, droppedFromCancelledEffects: counts.dropped,
                        releaseWhenEmpty: releasesWhenEmpty, pause: handled >= budget, retired: &retired)
                    : state.finishBatch(
                        &owner.spare, state: owner.state, reduced: counts.reduced, droppedFromCancelledEffects: counts.dropped,
                        releaseWhenEmpty: releasesWhenEmpty, pause: handled >= budget, retired: &retired)
                switch action {
                case .released, .releasedWaking:
                    // Still inside the lock, so still ours: hand the buffer back for the next drain
                    // (unless a burst grew it: it is freed with `batch`, after the lock), and note
                    // whether this pass found work for the next holder's second look. After the
                    // lock the owner is no longer ours: the next holder may be reading both.
                    if holdsSpare && Self.keeps(batch) { swap(&batch, &owner.spare) }
                    if !woken && releaseWhenEmpty { owner.secondLookPays = handled > 0 }
                    if let parking { parked = state.parkHostAfterPass(parking) }
                case .drainMore, .keepRole, .pause, .tearDown:
                    break
                }
                return action
            }
            // The state published before may hold the last reference to something whose
            // `deinit` touches the loop: it goes here, outside the lock.
            retired = nil
            switch action {
            case .drainMore:
                if !holdsSpare {
                    swap(&batch, &owner.spare)
                    holdsSpare = true
                }
                // Taken from the back of the reversed batch: `popLast` moves each item out, so no
                // item is copied, none is destroyed twice, and the batch ends empty with its
                // capacity (indexing and then `removeAll` cost more per item: W1 on `actor`).
                handled &+= batch.count
                batch.reverse()
                while let item = batch.popLast() {
                    if stopRequested.load(ordering: .relaxed) {
                        batch.append(item)
                        discard(batch.reversed())
                        batch.removeAll(keepingCapacity: true)
                        break
                    }
                    owner.process(item, engine: self)
                }
            case .released:
                return parked ? .parked : .released
            case .releasedWaking(let waiters):
                for waiter in waiters { waiter.resume() }
                return parked ? .parked : .released
            case .keepRole, .pause:
                if holdsSpare && Self.keeps(batch) { swap(&batch, &owner.spare) }
                guard case .keepRole = action else { return .held(releaseWhenEmpty: releaseWhenEmpty) }
                return .held(releaseWhenEmpty: true)
            case .tearDown:
                tearDown(owner)
                return .tornDown
            }
        }
    }

    /// A turn of a backend that shares its thread (`actor`, the `stream` host): passes until the
    /// queue is empty, yielding the thread every ``turnBudget`` items and once more before giving
    /// the role up — a sender in full flow refills the queue meanwhile, and one wake-up then
    /// serves the whole burst. Under a sustained flow the yields keep a drain from starving every
    /// other task on the cooperative pool (one thread per CPU), other loops included.
    ///
    /// `between` runs after every pass, in the drain role; it returns `false` to end the turn at
    /// a point where the role is still held (the `stream` host, whose effects started in the pass
    /// need a task group to join first). Runs in the caller's isolation: on the actor, it is the
    /// actor's turn.
    @inlinable
    nonisolated(nonsending)
    func drainTurns(
        _ owner: StateOwner<State, Event>,
        first: QueueItem<State, Event>?,
        releaseWhenEmpty: Bool,
        between: () -> Bool
    ) async -> DrainEnd {
        let end = drainPass(owner, first: first, releaseWhenEmpty: releaseWhenEmpty, budget: Self.turnBudget)
        return await continueTurns(owner, after: end, between: between)
    }

    /// The rest of a turn whose first pass ended with `end`: `between`, then, while the role is
    /// held and `between` agreed, a yield and the next pass (see
    /// ``drainTurns(_:first:releaseWhenEmpty:between:)``). A backend that ran the first pass
    /// itself (``drainPass(_:event:from:budget:)``) calls it only when that pass kept the role or
    /// left work for `between`, so that a wake-up that released the role at once makes no
    /// asynchronous call. Never inlined: inlined, what it keeps across its yield is allocated in
    /// the caller's task on every wake-up, whether or not the turn goes on (the `service`
    /// workload on `actor` measures it).
    @inlinable
    @inline(never)
    nonisolated(nonsending)
    func continueTurns(_ owner: StateOwner<State, Event>, after end: DrainEnd, between: () -> Bool) async -> DrainEnd {
        var end = end
        while true {
            let goOn = between()
            guard case .held(let releaseWhenEmpty) = end, goOn else { return end }
            await Task.yield()
            end = drainPass(owner, first: nil, releaseWhenEmpty: releaseWhenEmpty, budget: Self.turnBudget)
        }
    }

    /// Publishes the owner's state and counts now rather than at the end of the batch.
    @inlinable
    func publish(_ owner: StateOwner<State, Event>) {
        let counts = owner.takeCounts()
        // The state published before comes back out of the lock and is released here, after it
        // (see `drainPass`).
        _ = lock.withLock {
            $0.publish(owner.state, reduced: counts.reduced, droppedFromCancelledEffects: counts.dropped)
        }
    }

    /// Items dequeued but not handled because stop began: counted, their callers told, and
    /// observers that had not joined yet set aside to get the final state and their stop.
    @usableFromInline
    func discard(_ items: some Collection<QueueItem<State, Event>>) {
        let events = reportDiscarded(items)
        lock.withLock { $0.discarded(items, events: events) }
    }

    /// Tells whoever sent the events that stop discarded: each is reported to `onDrop`, and each
    /// `sendAndWait` caller gets `LoopError.stopped`. Returns how many items were events.
    /// (Observers among the items are not forgotten: ``LoopStateMachine/discarded(_:events:)``.)
    @inlinable
    @discardableResult
    func reportDiscarded(_ items: some Sequence<QueueItem<State, Event>>) -> Int {
        var count = 0
        for item in items {
            switch item {
            case .event(let event, _):
                count += 1
                instrumentation?.hooks.onDrop?(event, .discardedAtStop)
            case .submit(let event, let reply):
                count += 1
                instrumentation?.hooks.onDrop?(event, .discardedAtStop)
                reply.resume(throwing: LoopError.stopped)
            case .traced(let event, let cause):
                count += 1
                if let onDrop = instrumentation?.hooks.onDrop {
                    // In the event's context, as every drop of a loop that propagates.
                    ServiceContext.$current.withValue(cause.context) { onDrop(event, .discardedAtStop) }
                }
                cause.reply?.resume(throwing: LoopError.stopped)
            case .start, .addObserver, .removeObserver:
                break
            }
        }
        return count
    }
}

/// How a drain ended: a pass (``LoopEngine/drainPass(_:first:releaseWhenEmpty:budget:)``), a
/// turn of passes (``LoopEngine/drainTurns(_:first:releaseWhenEmpty:between:)``) or the `stream` host's wait.
@usableFromInline
enum DrainEnd {
    /// The queue was empty and the role was released.
    case released
    /// As ``released``, and the host that passed its continuation to the pass parked in the same
    /// lock (``LoopEngine/drainPass(_:event:from:releaseWhenEmpty:budget:parking:)``): its next
    /// wake-up resumes it.
    case parked
    /// The role is still held: the pass spent its budget with items queued, or found the
    /// queue empty and kept the role for a second look, as asked. The next pass takes
    /// `releaseWhenEmpty`: a second look releases the role when it finds nothing.
    case held(releaseWhenEmpty: Bool)
    /// Stop began; the loop is torn down.
    case tornDown

    @inlinable
    var holdsRole: Bool {
        if case .held = self { return true }
        return false
    }
}
