/// The loop's queue while it takes items: what waits for the drain, the `sendAndWait` calls
/// parked for room, the count held against the capacity, the first-warning flags and the ids of
/// joining observers. One of the sub-machines ``LoopStateMachine`` composes, guarded by the
/// loop's lock.
///
/// It is `open` until stop begins, then `closed` for good: ``close()`` hands its items and
/// parked calls out, and from then on nothing is queued or parked. Whether an item may enter is
/// ``Phase``'s decision, taken first by every send; this machine keeps the count against the
/// capacity and the items themselves. Its fields change only through the transitions below
/// (their setters are private to this file); a transition that makes no sense in its state
/// traps, naming the state and the transition.
@usableFromInline
struct Intake<State: Sendable, Event: Sendable>: Sendable {
    @usableFromInline private(set) var items: [QueueItem<State, Event>] = []
    @usableFromInline private(set) var parked: [ParkedSubmit<State, Event>] = []
    /// Items from ``Loop/send(_:)`` and `sendAndWait` in `items`: only these count against
    /// `capacity`.
    @usableFromInline private(set) var externalQueued = 0
    @usableFromInline let capacity: Int
    @usableFromInline private(set) var nextObserverID = 0
    @usableFromInline private(set) var warnedAfterStop = false
    @usableFromInline private(set) var warnedOverCapacity = false
    @usableFromInline private(set) var isClosed = false

    @inlinable
    init(capacity: Int) {
        self.capacity = capacity
    }

    @inlinable
    var isEmpty: Bool { items.isEmpty && parked.isEmpty }

    /// An item from outside (``Loop/send(_:)``, `sendAndWait`) takes a place against the
    /// capacity; `false` when the queue holds as many as the capacity allows.
    @inlinable
    mutating func reserveExternal() -> Bool {
        if externalQueued >= capacity { return false }
        externalQueued += 1
        return true
    }

    /// Up to `count` items from outside take places against the capacity, as many as it has
    /// left; returns how many did.
    @inlinable
    mutating func reserveExternal(upTo count: Int) -> Int {
        let reserved = min(count, max(capacity - externalQueued, 0))
        externalQueued += reserved
        return reserved
    }

    /// Queued behind the current drain. Only an item ``Phase/admit()`` let in reaches this, so a
    /// closed intake never gets here; the check is Phase's, once per send.
    @inlinable
    mutating func append(_ item: QueueItem<State, Event>) {
        items.append(item)
    }

    /// Whether a `sendAndWait` call must wait for room: the queue is full, or others already
    /// wait, and it goes behind them.
    @inlinable
    var mustPark: Bool { externalQueued >= capacity || !parked.isEmpty }

    @inlinable
    mutating func park(_ submit: ParkedSubmit<State, Event>) {
        if isClosed { invalid("park(_:)") }
        parked.append(submit)
    }

    /// Takes the parked call `id` out of line; `nil` if it is no longer parked (room came and it
    /// joined the queue, or stop handed it out).
    @inlinable
    mutating func unpark(id: UInt64) -> ParkedSubmit<State, Event>? {
        guard let index = parked.firstIndex(where: { $0.id == id }) else { return nil }
        return parked.remove(at: index)
    }

    /// The drain takes every queued item into `batch` (an empty buffer, whose capacity the queue
    /// keeps), then as many parked calls as the capacity allows, oldest first; any call parked
    /// from now on queues behind them.
    @inlinable
    mutating func takeBatch(into batch: inout [QueueItem<State, Event>]) {
        swap(&items, &batch)
        externalQueued = 0
        if !parked.isEmpty { moveParked(into: &batch) }
    }

    /// Out of line: only a full bounded queue parks calls, and inlined this loop kept the lock's
    /// closure around ``LoopStateMachine/finishBatch(_:state:reduced:droppedFromCancelledEffects:releaseWhenEmpty:pause:retired:)``
    /// from being inlined into every drain pass (W2, the ping-pong workload, measures it).
    @inlinable
    @inline(never)
    mutating func moveParked(into batch: inout [QueueItem<State, Event>]) {
        var moved = 0
        while !parked.isEmpty && moved < capacity {
            batch.append(parked.removeFirst().item)
            moved += 1
        }
    }

    /// Buffers keep their capacity from batch to batch, so that a steady flow allocates nothing;
    /// but not the peak of a burst: an empty buffer above `kept` items is given back. They are
    /// empty, so freeing them under the lock runs no user code.
    @inlinable
    mutating func shrink(keeping kept: Int) {
        if items.capacity > kept { items = [] }
        if parked.capacity > kept { parked = [] }
    }

    /// Stop began: the queue closes, and what it held goes to the caller, who reports it after
    /// the lock.
    @inlinable
    mutating func close() -> (discarded: [QueueItem<State, Event>], parked: [ParkedSubmit<State, Event>]) {
        if isClosed { invalid("close()") }
        isClosed = true
        externalQueued = 0
        let contents = (items, parked)
        items = []
        parked = []
        return contents
    }

    /// The id of an observer that joins.
    @inlinable
    mutating func observerID() -> Int {
        defer { nextObserverID += 1 }
        return nextObserverID
    }

    /// `true` the first time an item is refused because stop has begun.
    @inlinable
    mutating func firstWarningAfterStop() -> Bool {
        defer { warnedAfterStop = true }
        return !warnedAfterStop
    }

    /// `true` the first time an item is refused because the queue is full.
    @inlinable
    mutating func firstWarningOverCapacity() -> Bool {
        defer { warnedOverCapacity = true }
        return !warnedOverCapacity
    }

    @usableFromInline
    var stateName: String { isClosed ? "closed" : "open" }

    @usableFromInline
    func invalid(_ transition: StaticString) -> Never {
        preconditionFailure("Intake.\(transition) in state \(stateName): the queue closed when stop began")
    }
}
