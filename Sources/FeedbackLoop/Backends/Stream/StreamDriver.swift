import Synchronization

/// The `stream` backend: the loop as one structured task tree. One task — the *host* — holds the
/// state's owner and waits on its ``HostMailbox`` for wake-ups; every `.run` effect is a child
/// task of a discarding task group in the host, so task-local values bound around the host reach
/// every effect, priority propagates, and the host ends only once every effect has.
///
/// Events wait in the loop's shared queue (where capacity, `sendAndWait` and statistics work as on
/// every backend). An idle host is parked in the loop's own lock (``HostSlot``): the `send` that
/// finds the loop idle takes the drain role and the parked host in one lock round trip and
/// resumes it with the event; the host then drains whatever has arrived meanwhile in the same
/// turn, so a burst costs one resumption of the host, not one per event. Every other signal goes
/// through the host's ``HostMailbox``.
///
/// The host is a task of the loop's own, started with the loop (``LoopHosting/ownTask``), or the
/// task of whoever calls ``Loop/run()`` (``LoopHosting/run``): events sent before then wait.
@usableFromInline
final class StreamDriver<State: Sendable, Event: Sendable>: LoopDriver, @unchecked Sendable {
    // @unchecked: `owner` and `children` are touched only by the host — the one task that
    // parks in the engine's `HostSlot` and takes from `mailbox` — or, once the host has ended, by
    // the holder of the drain role (see `HostMailbox.Hosting`). `mailbox` is Sendable.

    /// What the host is told to do through its mailbox. There is at most one signal in flight:
    /// each is sent by the holder of the drain role, which passes the role on with it.
    @usableFromInline
    enum Signal: Sendable {
        /// Drain the queue, starting with this event, which a sender that found the loop idle
        /// kept in hand (see ``LoopEngine/drainPass(_:event:from:budget:)``).
        case event(Event, EffectHandle?)
        /// Drain the queue, starting with this item.
        case drain(QueueItem<State, Event>)
        /// Stop began while the loop was idle: tear the state's owner down.
        case tearDown
        /// The last running effect ended (see ``childrenEnded``). Not a drain-role signal: it
        /// may come at any time, any number of times, and is dropped once the host has gone.
        case childrenEnded
    }

    @usableFromInline let owner: StateOwner<State, Event>
    /// Inline rather than a `Lock` object, which every idle loop would keep as one more allocation.
    @usableFromInline let mailbox: InlineLock<HostMailbox<State, Event>>
    /// `.run` effects started during the current drain pass, for the host to add to its group.
    @exclusivity(unchecked) @usableFromInline var children: [ChildEffect<State, Event>] = []
    /// Effects in the host's group that have not ended.
    @usableFromInline let running = Atomic<Int>(0)

    @inlinable
    init(owner: sending StateOwner<State, Event>) {
        self.owner = owner
        mailbox = InlineLock(HostMailbox())
    }

    // MARK: The seam

    @inlinable
    func start(_ engine: LoopEngine<State, Event>, hosting: LoopHosting) {
        guard hosting == .ownTask, claimHost() else { return }
        Task { await self.host(engine, cancellable: false) }
    }

    @inlinable
    func drain(_ engine: LoopEngine<State, Event>, event: Event, from handle: EffectHandle?) {
        send(.event(event, handle), engine)
    }

    @inlinable
    func drain(_ engine: LoopEngine<State, Event>, startingWith item: QueueItem<State, Event>) {
        send(.drain(item), engine)
    }

    /// A loop nobody hosted yet (``LoopHosting/run`` and nobody ran it) gets a task to host its
    /// teardown, so that effects end and `stop()`'s waiters return.
    @inlinable
    func stopBegan(_ engine: LoopEngine<State, Event>, tearDown: Bool) {
        if tearDown { send(.tearDown, engine) }
        guard claimHost() else { return }
        Task { await self.host(engine, cancellable: false) }
    }

    /// ``stopBegan(_:tearDown:)`` for a caller that waits for the stop anyway: it hosts the
    /// teardown itself.
    @inlinable
    func stopBeganInCaller(_ engine: LoopEngine<State, Event>, tearDown: Bool) async {
        if tearDown { send(.tearDown, engine) }
        guard claimHost() else { return }
        await host(engine, cancellable: true)
    }

    /// With ``LoopHosting/run``, the first caller of ``Loop/run()`` hosts the loop in its task;
    /// returns once the loop is torn down and every effect ended.
    @inlinable
    func host(_ engine: LoopEngine<State, Event>, forRun hosting: LoopHosting) async {
        guard hosting == .run, claimHost() else { return }
        await host(engine, cancellable: true)
    }

    /// A child of the host's task group, added once this drain pass ends. Called while the state's
    /// owner processes an event, so by the host (or, once the host has ended, the drain role's
    /// holder), which alone touches `children`.
    @inlinable
    func startTask(
        _ engine: LoopEngine<State, Event>, handle: EffectHandle, priority: UInt8?,
        body: @escaping @Sendable (Sink<Event>) async throws -> Void, sink: Sink<Event>, marker: EffectMarker
    ) -> EffectStopper {
        let child = ChildEffect(
            driver: self, engine: engine, handle: handle, priority: priority.map(TaskPriority.init(rawValue:)),
            body: body, sink: sink, marker: marker)
        children.append(child)
        return .child(child)
    }

    /// Always inlined: called out of line, it takes the signal by address and copies it into
    /// the mailbox through the run-time's value witnesses, on every wake-up (the `service`
    /// workload measures it).
    @inlinable
    @inline(__always)
    func send(_ signal: Signal, _ engine: LoopEngine<State, Event>) {
        switch mailbox.withLock({ $0.post(signal) }) {
        case .posted: engine.postedToHost()
        case .handedOver: return
        case .handleHere: obeyInPlace(signal, engine)
        }
    }

    // MARK: The host

    /// Claims the host role; `false` if a host already has it or had it.
    @inlinable
    func claimHost() -> Bool {
        mailbox.withLock { $0.claimHost() }
    }

    /// Runs the loop until it is torn down, then waits for every effect to end. The caller must
    /// have claimed the role (``claimHost()``); `cancellable` when the calling task is one that
    /// someone can cancel (see ``wait(_:cancellable:_:)``).
    ///
    /// The task group exists only while effects run: a discarding task group in a parked task
    /// nearly doubles what the task costs, so an idle host waits for its next signal outside any
    /// group, and enters one when a drain starts effects, for as long as any of them runs (the
    /// last to end wakes the host with ``Signal/childrenEnded``). The `loops` scenario's bytes per
    /// idle loop measure it.
    ///
    /// A wake-up by one event runs its first pass inside the continuation the host then waits
    /// on, so that the lock that releases the drain role parks the host too (``DrainEnd/parked``):
    /// one lock per wake-up on the host's side, and the sender's lock takes the role and the host
    /// at once (the `service` workload measures it).
    ///
    /// Always inlined, as ``wait(_:cancellable:_:)`` is: a task allocates its first frame with
    /// itself, and every further frame from a slab of about a kilobyte that it keeps for life.
    /// Inlined into the task that hosts, a host parked between events, whose event wake-ups call
    /// nothing asynchronous, needs no slab (the `loops` scenario's bytes per idle loop measure it).
    @inlinable
    @inline(__always)
    func host(_ engine: LoopEngine<State, Event>, cancellable: Bool) async {
        // What was posted before the host started waits in its mailbox.
        var wake = HostWake<Event>.mail
        while true {
            var end: DrainEnd
            switch wake {
            case .event(let event, let handle):
                end = .released
                // Inline: a call of its own cost ~35 instructions per wake-up (the `service`
                // workload measures it); what the pass keeps is synchronous, outside the frame an
                // idle host keeps (the `loops` scenario's bytes per idle loop measure it).
                wake = await wait(engine, cancellable: cancellable) { host in
                    end = engine.drainPass(
                        owner, event: event, from: handle, budget: LoopEngine<State, Event>.turnBudget, parking: host)
                    if case .parked = end { return true }
                    return false
                }
                if case .parked = end { continue }
            case .mail:
                switch mailbox.withLock({ $0.take() }) {
                case .signal(let signal):
                    end = firstPass(signal, engine)
                case .closed:
                    return leaveCancelled(engine)
                case .empty:
                    wake = await wait(engine, cancellable: cancellable) { engine.parkHost($0) }
                    continue
                }
            }
            if end.holdsRole && children.isEmpty {
                end = await engine.continueTurns(owner, after: end) { children.isEmpty }
            }
            if end.holdsRole || !children.isEmpty {
                guard let after = await hostWithChildren(engine, from: end, cancellable: cancellable) else { return }
                end = after
            }
            if case .tornDown = end {
                mailbox.withLock { $0.close() }
                leave(engine)
                return
            }
            wake = .mail
        }
    }

    /// The host waits for its next wake-up: `park` runs inside the continuation it waits on and
    /// returns whether it parked the host in the engine (``HostSlot``), whose next wake-up then
    /// resumes it; otherwise the host resumes itself at once to look in its mailbox.
    ///
    /// With `cancellable`, cancelling the calling task closes the mailbox and wakes the host, as
    /// it ended the stream the host once consumed: for a host in a task someone can cancel
    /// (``Loop/run()``'s caller, or `stop()`'s hosting a teardown). A host in a task of its own,
    /// whose handle nobody holds, waits without the cancellation handler, which costs a status
    /// record on every wait.
    @inlinable
    @inline(__always)
    nonisolated(nonsending)
    func wait(
        _ engine: LoopEngine<State, Event>, cancellable: Bool,
        _ park: (UnsafeContinuation<HostWake<Event>, Never>) -> Bool
    ) async -> HostWake<Event> {
        guard cancellable else {
            return await withUnsafeContinuation { host in
                if !park(host) { host.resume(returning: .mail) }
            }
        }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { host in
                if !park(host) { host.resume(returning: .mail) }
            }
        } onCancel: {
            mailbox.withLock { $0.close() }
            engine.postedToHost()
        }
    }

    /// The next signal for a host that waits among its effects; `nil` once the mailbox is closed
    /// (after what was pending).
    @inlinable
    nonisolated(nonsending)
    func nextSignal(_ engine: LoopEngine<State, Event>, cancellable: Bool) async -> Signal? {
        while true {
            switch mailbox.withLock({ $0.take() }) {
            case .signal(let signal): return signal
            case .closed: return nil
            case .empty: break
            }
            let wake = await wait(engine, cancellable: cancellable) { engine.parkHost($0) }
            if case .event(let event, let handle) = wake { return .event(event, handle) }
        }
    }

    /// The host while effects run: in a task group, until the last has ended. A function of its
    /// own, so that an idle host's frame does not hold what only this part needs. Returns `nil`
    /// once the host's task was cancelled and it has left (``leaveCancelled(_:)``).
    @inlinable
    @inline(never)
    nonisolated(nonsending)
    func hostWithChildren(_ engine: LoopEngine<State, Event>, from end: DrainEnd, cancellable: Bool) async -> DrainEnd? {
        var end: DrainEnd? = end
        await withDiscardingTaskGroup { group in
            addChildren(to: &group)
            if case .held(let releaseWhenEmpty)? = end {
                await Task.yield()
                end = await engine.drainTurns(owner, first: nil, releaseWhenEmpty: releaseWhenEmpty) {
                    addChildren(to: &group)
                    return true
                }
            }
            while case .released? = end, running.load(ordering: .acquiring) > 0 {
                guard let signal = await nextSignal(engine, cancellable: cancellable) else {
                    // Before the group ends the effects by cancelling the tree.
                    leaveCancelled(engine)
                    end = nil
                    break
                }
                end = await obey(signal, engine) {
                    addChildren(to: &group)
                    return true
                }
            }
        }
        return end
    }

    /// Runs `signal`. Effects started by a drain join the group after each pass
    /// (`startChildren`); with no group to join (`startChildren` returns `false`), the drain's
    /// turn ends at the next pause, still holding the role, for the host to go on in a group.
    ///
    /// Not inlined into `host`, whose frame an idle loop keeps for its whole life. Like every
    /// asynchronous function the host calls, it runs where the host runs (`nonsending`): as a
    /// plain `nonisolated` function each call was a switch of executor, on every wake-up (the
    /// `service` workload measures it).
    @inlinable
    @inline(never)
    nonisolated(nonsending)
    func obey(_ signal: Signal, _ engine: LoopEngine<State, Event>, startChildren: () -> Bool) async -> DrainEnd {
        switch signal {
        case .event(let event, let handle):
            // The turn goes on only if this pass kept the role or started effects: a loop woken
            // one event at a time makes no further asynchronous call.
            let end = pass(engine, event: event, from: handle)
            guard end.holdsRole || !children.isEmpty else { return end }
            return await engine.continueTurns(owner, after: end) { children.isEmpty || startChildren() }
        case .drain(let first):
            return await engine.drainTurns(owner, first: first, releaseWhenEmpty: false) {
                children.isEmpty || startChildren()
            }
        case .tearDown:
            engine.tearDown(owner)
            _ = children.isEmpty || startChildren()
            return .tornDown
        case .childrenEnded:
            return .released
        }
    }

    /// The first pass of a wake-up by one event. Synchronous and out of line, so that `host`'s
    /// frame, which an idle loop keeps for its whole life, holds nothing of it.
    @inlinable
    @inline(never)
    func pass(_ engine: LoopEngine<State, Event>, event: Event, from handle: EffectHandle?) -> DrainEnd {
        engine.drainPass(owner, event: event, from: handle, budget: LoopEngine<State, Event>.turnBudget)
    }

    /// The first pass of `signal` outside a group (see ``obey(_:_:startChildren:)``), synchronous
    /// and out of line like ``pass(_:event:from:)``. The loop's first drain, of `.start` alone,
    /// releases the role once the queue is empty instead of keeping it for a second look: there
    /// is no flow to batch yet, and the turn the look costs is the host's first slab.
    @inlinable
    @inline(never)
    func firstPass(_ signal: Signal, _ engine: LoopEngine<State, Event>) -> DrainEnd {
        switch signal {
        case .event(let event, let handle):
            return pass(engine, event: event, from: handle)
        case .drain(let first):
            let started: Bool
            if case .start = first { started = true } else { started = false }
            return engine.drainPass(owner, first: first, releaseWhenEmpty: started, budget: LoopEngine<State, Event>.turnBudget)
        case .tearDown:
            engine.tearDown(owner)
            return .tornDown
        case .childrenEnded:
            return .released
        }
    }

    @inlinable
    func addChildren(to group: inout DiscardingTaskGroup) {
        guard !children.isEmpty else { return }
        running.add(children.count, ordering: .relaxed)
        for child in children {
            // The child carries everything its task needs: the closure captures one reference.
            group.addTask(priority: child.priority) {
                await child.run()
                child.driver.childEnded(child.engine)
            }
        }
        children.removeAll(keepingCapacity: true)
    }

    /// The last running effect wakes a host that waits in its group, so that it can leave it.
    @inlinable
    func childEnded(_ engine: LoopEngine<State, Event>) {
        // Refused once the host has gone: nothing to wake.
        if running.subtract(1, ordering: .acquiringAndReleasing).newValue == 0, mailbox.withLock({ $0.postChildrenEnded() }) {
            engine.postedToHost()
        }
    }

    /// The host's task was cancelled — its `run()` caller was — and the mailbox closed early. That
    /// stops the loop (`run()`'s own handler begins the stop too, maybe not yet): the host begins
    /// it, tears down if the loop was idle and leaves, so that the loop, not the cancellation of
    /// the task tree, ends the effects, and they count as cancelled.
    @usableFromInline
    func leaveCancelled(_ engine: LoopEngine<State, Event>) {
        mailbox.withLock { $0.close() }
        if engine.beginStopTakingTeardown() { engine.tearDown(owner) }
        leave(engine)
    }

    /// The host is done. Normally the loop is torn down and no signal comes again. If the host's
    /// task was cancelled first (its `run()` caller, cancelled, has begun the stop), the mailbox
    /// ended early: from here the drain role's holder runs the state's owner on the spot, and a signal
    /// the mailbox refused meanwhile is handled here first.
    @usableFromInline
    func leave(_ engine: LoopEngine<State, Event>) {
        while true {
            guard let signal = mailbox.withLock({ $0.leave() }) else { return }
            obeyInPlace(signal, engine)
        }
    }

    /// Runs `signal` on the calling thread, like the `callback` backend. Only once the host has
    /// ended, or by the host itself as it leaves.
    @usableFromInline
    func obeyInPlace(_ signal: Signal, _ engine: LoopEngine<State, Event>) {
        switch signal {
        case .event(let event, let handle): engine.drainPass(owner, first: .event(event, handle))
        case .drain(let first): engine.drainPass(owner, first: first)
        case .tearDown: engine.tearDown(owner)
        case .childrenEnded: return
        }
        // No group outlives the host: effects started now (there are none once stop has begun,
        // which is how the host ends early) run in tasks of their own.
        for child in children {
            Task(priority: child.priority) { await child.run() }
        }
        children.removeAll()
    }
}
