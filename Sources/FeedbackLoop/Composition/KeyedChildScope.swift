/// Many children of one feature inside a parent, each under its own id in an
/// ``IdentifiedStates``: an order desk's orders, a download manager's downloads.
///
/// ```swift
/// enum Desk {
///     struct State: Sendable { var orders = IdentifiedStates<Order.ID, Order.State>() }
///     enum Event: Sendable { case order(Order.ID, Order.Event), place(Order), remove(Order.ID) }
///
///     static let orders = KeyedChildScope(
///         state: \State.orders,
///         embed: Event.order,
///         extract: { if case .order(let id, let event) = $0 { (id, event) } else { nil } })
///
///     static func reduce(_ state: inout State, _ event: Event) {
///         orders.reduce(&state, event, with: Order.reduce)
///         switch event {
///         case .place(let order): state.orders[id: order.id] = Order.State(order)
///         case .remove(let id): state.orders[id: id] = nil      // cancels the order's effects
///         case .order: break
///         }
///     }
///
///     static func feedbacks(_ env: Environment) -> [Feedback<State, Event>] {
///         [orders.feedback(Order.feedbacks(env.order))]
///     }
/// }
/// ```
///
/// ## Each child is a feature of its own
/// Every child has its own instance of each of the child's feedbacks, with its own memory, so two
/// children whose queries are equal run two independent effects. A child's feedbacks see only
/// its state and send the parent's events tagged with its id. A child exists from the first
/// step its id is in the collection to the last; its feedbacks start fresh when it appears.
///
/// ## Only the children that changed
/// In each step, only the children the reducer wrote to and the child the step's event was
/// addressed to run their feedbacks. The collection's revisions say which: after a single write
/// the changed child is found at once, after several by looking at 32-child chunks' revisions;
/// the other children's queries are never evaluated. A write counts as a change even if it wrote
/// an equal value. Replacing the collection with one built elsewhere (not a changed copy of it)
/// shows every child one step.
///
/// What remains of an event's cost with many children is the state's copy: the loop keeps the
/// last published state, so the first write of each batch copies the chunk it touches and
/// brings a directory of chunks up to date (``IdentifiedStates`` reuses the one the state
/// published before held). `feedback-bench --scenario composition` measures both (see its rows).
///
/// ## Removal
/// When a child's id leaves the collection, every effect that child started is cancelled in that
/// step; events they send afterwards, or had sent and were still queued — those of effects that
/// had already finished too: a result sent with ``Sink/finish(sending:)``, a `.send` effect's
/// events — are dropped and counted in ``LoopStatistics/eventsDroppedFromCancelledEffects``, so a
/// removed child's late answer never reaches the parent's state. A child with the same id added
/// later is a new child, even within the same batch of events: an event is judged by the child
/// that sent it, not by whichever child holds the id when the event is reduced.
///
/// ## Orphaned events
/// An event for an id that is not in the collection when it is reduced is delivered to no child
/// — never to another one: ``reduce(_:_:with:)`` leaves the state alone, and the lifted
/// feedback counts it in ``LoopStatistics/eventsOrphaned`` and logs the first one at warning level.
public struct KeyedChildScope<
    ParentState: Sendable, ParentEvent: Sendable, ID: Hashable & Sendable, ChildState: Sendable, ChildEvent: Sendable
>: Sendable {
    @usableFromInline let children: PropertyAccess<ParentState, IdentifiedStates<ID, ChildState>>
    @usableFromInline let embed: @Sendable (ID, ChildEvent) -> ParentEvent
    @usableFromInline let extract: @Sendable (ParentEvent) -> (ID, ChildEvent)?

    /// - Parameters:
    ///   - state: Where the children's states are.
    ///   - embed: Makes the parent's event for a child's event, usually an enum case
    ///     `case order(Order.ID, Order.Event)`.
    ///   - extract: The inverse: the child's id and event, or `nil` for the parent's other events.
    public init(
        state: WritableKeyPath<ParentState, IdentifiedStates<ID, ChildState>> & Sendable,
        embed: @escaping @Sendable (ID, ChildEvent) -> ParentEvent,
        extract: @escaping @Sendable (ParentEvent) -> (ID, ChildEvent)?
    ) {
        self.children = PropertyAccess(state)
        self.embed = embed
        self.extract = extract
    }

    /// Runs the child's reducer on the state of the child the event is addressed to, if `event`
    /// is a child's event and that child exists. Returns whether it ran; an event for an id that
    /// is not in the collection changes nothing (the lifted feedback counts it as orphaned).
    @inlinable
    @discardableResult
    public func reduce(
        _ parent: inout ParentState,
        _ event: ParentEvent,
        with reduce: (inout ChildState, ChildEvent) -> Void
    ) -> Bool {
        guard let (id, childEvent) = extract(event) else { return false }
        return children.modify(&parent) { $0.modify(id: id) { reduce(&$0, childEvent) } } != nil
    }

    /// The child's reducer as a reducer of the parent that handles the children's events and
    /// ignores the rest; see ``reduce(_:_:with:)``.
    public func reducer(
        _ reduce: @escaping @Sendable (inout ChildState, ChildEvent) -> Void
    ) -> @Sendable (inout ParentState, ParentEvent) -> Void {
        { parent, event in self.reduce(&parent, event, with: reduce) }
    }

    /// The child's feedbacks, run for every child, as one feedback of the parent. See
    /// ``KeyedChildScope`` for what they see and when their effects end.
    @inlinable
    public func feedback(_ feedbacks: [Feedback<ChildState, ChildEvent>]) -> Feedback<ParentState, ParentEvent> {
        let scope = self
        return Feedback(
            makeReactor: { KeyedChildren(scope: scope, feedbacks: feedbacks).loopReactor() },
            makeChildReactor: { KeyedChildren(scope: scope, feedbacks: feedbacks).reactor() })
    }
}

/// The running children of one lifted keyed feedback, and what it saw of the collection last
/// time, to find what changed. Touched only by the drain-role holder.
@usableFromInline
final class KeyedChildren<
    ParentState: Sendable, ParentEvent: Sendable, ID: Hashable & Sendable, ChildState: Sendable, ChildEvent: Sendable,
    Door: EffectDoor<ParentEvent>
> {
    @usableFromInline typealias States = IdentifiedStates<ID, ChildState>

    @usableFromInline let scope: KeyedChildScope<ParentState, ParentEvent, ID, ChildState, ChildEvent>
    @usableFromInline let feedbacks: [Feedback<ChildState, ChildEvent>]
    @usableFromInline let lent = LentDoor<Door>()
    @exclusivity(unchecked) @usableFromInline var live: [ID: LiveChild<ChildState, ChildEvent>] = [:]
    @exclusivity(unchecked) @usableFromInline var lineage: Lineage?
    @exclusivity(unchecked) @usableFromInline var revision: UInt64 = 0
    /// Each chunk's revision when last seen. This table and `seen` are written on every event:
    /// as `Array`s, each write checked the buffer's uniqueness (the `keyed-children` workload).
    @usableFromInline let seenChunks = UnsharedArray<UInt64>()
    /// What each slot held when last seen, in one table so that a visit checks one bound, not
    /// three.
    @usableFromInline let seen = UnsharedArray<SeenSlot>()
    @exclusivity(unchecked) @usableFromInline var warnedOrphan = false
    /// The child the step's event is addressed to, and whether the step ended it: an event for a
    /// child that the same step removed is not an orphan. Noted as children end rather than
    /// looked up before the step, which cost a hash of the id on every event.
    @exclusivity(unchecked) @usableFromInline var addressedID: ID?
    @exclusivity(unchecked) @usableFromInline var endedAddressed = false

    /// A slot as last seen: its revision, the id it held and the running child last shown there.
    /// The child lets a slot that changed but still names the same child reach it without
    /// hashing its id into `live` (a hash per event, in the `keyed-children` workload). It is cleared when the slot is
    /// seen empty, truncated with the slots and reset by `reconcile`, so it never names a child
    /// that ended; `visit` checks that anyway, since stepping an ended child would start effects
    /// nothing cancels.
    @usableFromInline
    struct SeenSlot {
        @usableFromInline var revision: UInt64
        @usableFromInline var id: ID?
        @usableFromInline var child: LiveChild<ChildState, ChildEvent>?

        @inlinable
        init(revision: UInt64, id: ID?) {
            self.revision = revision
            self.id = id
        }
    }

    @inlinable
    init(scope: KeyedChildScope<ParentState, ParentEvent, ID, ChildState, ChildEvent>, feedbacks: [Feedback<ChildState, ChildEvent>]) {
        self.scope = scope
        self.feedbacks = feedbacks
    }

    /// The reactor for a child's feedbacks (a keyed collection inside a lifted child).
    @inlinable
    func reactor() -> (ParentState, ParentEvent?, Door) -> Void {
        { parent, event, door in self.react(parent, event, door) }
    }

    /// The reactor for the loop's own feedbacks. The same as ``reactor()``, but written for the
    /// loop's door type: a closure generic over `Door` takes the door indirectly and needs a
    /// reabstraction thunk to become a loop's reactor (a thunk per event, `keyed-children`).
    @inlinable
    func loopReactor() -> Reactor<ParentState, ParentEvent> where Door == LoopDoor<ParentState, ParentEvent> {
        { parent, event, door in self.react(parent, event, door) }
    }

    @inlinable
    @inline(__always)
    func react(_ parent: ParentState, _ event: ParentEvent?, _ door: Door) {
        lent.with(door) {
            scope.children.withPointer(in: parent) { states in
                step(states, event.flatMap(scope.extract), door: door)
            }
        }
    }

    /// One step of the parent. `states` points at the collection inside the parent's state, for
    /// this call only (``PropertyAccess/withPointer(in:_:)``): read through, never kept, so that
    /// no event pays for a copy of the collection.
    ///
    /// `step`, `update` and `visit` are always inlined into the reactor: as calls, with their many
    /// arguments spilled and reloaded, they cost the `keyed-children` workload a tenth of its
    /// instructions on `actor`.
    @inlinable
    @inline(__always)
    func step(_ states: UnsafePointer<States>, _ addressed: (ID, ChildEvent)?, door: Door) {
        var delivered = false
        addressedID = addressed?.0
        endedAddressed = false
        defer { addressedID = nil }
        if states.pointee.lineage !== lineage {
            delivered = reconcile(states.pointee, addressed)
        } else if states.pointee.revision != revision {
            delivered = update(states, addressed)
        }
        guard let (id, childEvent) = addressed, !delivered else { return }
        let child = live[id]
        if let child, let value = states.pointee[id: id] {
            child.step(value, childEvent, appeared: false)
        } else if child == nil, !endedAddressed, !states.pointee.contains(id: id) {
            door.childEventOrphaned("\(id): \(childEvent)", warn: !warnedOrphan)
            warnedOrphan = true
        }
    }

    /// The same lineage, changed: visits the chunks and slots whose revision differs from the
    /// one seen last time. Returns whether the addressed child was shown its event.
    @inlinable
    @inline(__always)
    func update(_ states: UnsafePointer<States>, _ addressed: (ID, ChildEvent)?) -> Bool {
        var delivered = false
        if states.pointee.slotCount < seen.count {
            // A copy from before some children were added (or after `removeAll`): the slots
            // past its end are gone.
            for slot in states.pointee.slotCount..<seen.count {
                if let id = seen[slot].id, !states.pointee.contains(id: id) { end(id) }
            }
            seen.truncate(to: states.pointee.slotCount)
            seenChunks.truncate(to: states.pointee.chunkCount)
        }
        if states.pointee.previousRevision == revision, states.pointee.lastWrittenSlot >= 0 {
            // One write since the state seen last: only its slot can differ.
            let slot = states.pointee.lastWrittenSlot
            let chunk = slot >> States.chunkShift
            while seenChunks.count <= chunk { seenChunks.append(0) }
            seenChunks[chunk] = states.pointee.chunkRevision(chunk)
            visit(slot, states.pointee.slot(slot), in: states, addressed, &delivered)
        } else {
            for chunk in 0..<states.pointee.chunkCount {
                if chunk == seenChunks.count { seenChunks.append(0) }
                let chunkRevision = states.pointee.chunkRevision(chunk)
                guard chunkRevision != seenChunks[chunk] else { continue }
                seenChunks[chunk] = chunkRevision
                let base = chunk << States.chunkShift
                for slot in base..<(base + states.pointee.chunkSlotCount(chunk)) {
                    visit(slot, states.pointee.slot(slot), in: states, addressed, &delivered)
                }
            }
        }
        revision = states.pointee.revision
        return delivered
    }

    /// Shows the child in `slot` its new state if the slot changed since seen, ends the child it
    /// held before if that one is gone.
    @inlinable
    @inline(__always)
    func visit(_ slot: Int, _ entry: States.Slot, in states: UnsafePointer<States>, _ addressed: (ID, ChildEvent)?, _ delivered: inout Bool) {
        while seen.count <= slot { seen.append(SeenSlot(revision: 0, id: nil)) }
        guard entry.revision != seen[slot].revision else { return }
        seen[slot].revision = entry.revision
        let previous = seen[slot].id
        if previous != entry.id {
            seen[slot].id = entry.id
            seen[slot].child = nil
            if let previous, !states.pointee.contains(id: previous) { end(previous) }
        }
        if let value = entry.value {
            let event = addressed.flatMap { $0.0 == entry.id ? $0.1 : nil }
            if event != nil { delivered = true }
            if seen[slot].child != nil {
                // Borrowed, not retained (a retain and a release per event, `keyed-children`):
                // `seen` holds the child through the step. Only this feedback's own `visit`,
                // `update`, `reconcile` and `end` change `seen`, and nothing re-enters it while
                // its child steps: whatever the child's feedbacks send is queued.
                let child = Unmanaged.passUnretained(seen[slot].child.unsafelyUnwrapped)
                if child._withUnsafeGuaranteedRef({ !$0.effects.ended }) {
                    child._withUnsafeGuaranteedRef { $0.step(value, event, appeared: false) }
                } else {
                    seen[slot].child = show(entry.id, value, event)
                }
            } else {
                seen[slot].child = show(entry.id, value, event)
            }
        } else {
            seen[slot].child = nil
            if !states.pointee.contains(id: entry.id) { end(entry.id) }
        }
    }

    /// A collection this feedback has not seen a copy of: matches children by id and shows
    /// every one a step.
    @inlinable
    func reconcile(_ states: States, _ addressed: (ID, ChildEvent)?) -> Bool {
        for id in Array(live.keys) where !states.contains(id: id) { end(id) }
        lineage = states.lineage
        revision = states.revision
        seenChunks.truncate(to: 0)
        for chunk in 0..<states.chunkCount { seenChunks.append(states.chunkRevision(chunk)) }
        seen.truncate(to: 0)
        seen.reserveCapacity(states.slotCount)
        for slot in 0..<states.slotCount {
            let entry = states.slot(slot)
            seen.append(SeenSlot(revision: entry.revision, id: entry.id))
        }
        // Each slot's child is noted when the slot is next shown: `live` finds them until then.
        var delivered = false
        for (id, value) in states {
            let event = addressed.flatMap { $0.0 == id ? $0.1 : nil }
            if event != nil { delivered = true }
            show(id, value, event)
        }
        return delivered
    }

    /// Shows the child with this id a step, starting it if it is new; returns it.
    @inlinable
    @discardableResult
    func show(_ id: ID, _ value: ChildState, _ event: ChildEvent?) -> LiveChild<ChildState, ChildEvent> {
        if let child = live[id] {
            child.step(value, event, appeared: false)
            return child
        } else {
            let embed = scope.embed
            let child = LiveChild(
                feedbacks: feedbacks,
                parent: EmbeddedDoor<ChildEvent, Door>(lent: lent, embed: { embed(id, $0) }))
            live[id] = child
            child.step(value, nil, appeared: true)
            return child
        }
    }

    @inlinable
    func end(_ id: ID) {
        guard let child = live.removeValue(forKey: id) else { return }
        if let addressedID, addressedID == id { endedAddressed = true }
        child.end()
    }
}
