/// A loop's observers in the order they joined, which is the order they are called in, with
/// adding and removing one by id in O(1) amortised time.
///
/// A plain array removed from with a scan made N observers joining and leaving cost O(N²)
/// (`callback` here: 10,000 in 6.5–9.4 s, 30,000 in 93 s; now a million in 3–10 s on every
/// backend, see Benchmarks/HISTORY.md, "Observers joining and leaving"). Here a leaving observer leaves a
/// hole (`nil`) in `entries`, so that nothing moves, and `positions` finds it by id. Holes are
/// squeezed out once they are more than half of `entries`: that costs O(entries) after at least
/// half as many removals, so O(1) per removal amortised, and `entries` never holds more than
/// twice the live observers.
///
/// A loop usually has 0–2 observers, and calling them is on the path of every state. Up to
/// `linearLimit` entries the list is a plain array: no hash table to allocate on the first join,
/// removal scans at most `linearLimit` entries and closes the gap at once, so a small list has no
/// holes, and calling its observers through `forEachObserver` costs what it cost before, plus one
/// `nil` check each.
///
/// Touched only by the holder of the drain role, like the rest of the ``StateOwner``.
@usableFromInline
struct ObserverList<State: Sendable>: Sequence {
    /// Up to this many entries (holes included), no `positions`: the list is a plain array.
    @inlinable static var linearLimit: Int { 8 }

    /// Every observer that joined and has not left, in joining order; `nil` where one left.
    /// No holes while `entries.count <= linearLimit`.
    @usableFromInline var entries: [ObserverEntry<State>?] = []
    /// The index in `entries` of every observer still there, by id; kept only while
    /// `entries.count > linearLimit`, empty otherwise.
    @usableFromInline var positions: [Int: Int] = [:]
    /// How many `nil`s `entries` holds; at most half of it.
    @usableFromInline var holes = 0

    #if DEBUG
    /// Entries looked at or moved by removals and compactions since the list was made: the
    /// work that must grow linearly, not quadratically, with the number of observers. Debug
    /// builds only, for the tests.
    @usableFromInline var slotsVisited = 0
    #endif

    @inlinable
    init() {}

    /// The observers that have not left.
    @inlinable
    var count: Int { entries.count - holes }

    @inlinable
    var isEmpty: Bool { count == 0 }

    /// Adds `entry` after every observer already there. Ids are unique within a loop.
    @inlinable
    mutating func append(_ entry: ObserverEntry<State>) {
        entries.append(entry)
        if entries.count == Self.linearLimit + 1 {
            // Crossing into a list long enough to need an index. Coming from a plain array, so
            // no holes: every entry is live.
            reindex()
        } else if entries.count > Self.linearLimit {
            positions[entry.id] = entries.count - 1
        }
    }

    /// Removes the observer with `id`; `false` if there is none (it had left already).
    @inlinable
    @discardableResult
    mutating func remove(id: Int) -> Bool {
        if entries.count <= Self.linearLimit {
            #if DEBUG
            slotsVisited &+= entries.count
            #endif
            guard let index = entries.firstIndex(where: { $0?.id == id }) else { return false }
            entries.remove(at: index)
            return true
        }
        guard let index = positions.removeValue(forKey: id) else { return false }
        #if DEBUG
        slotsVisited &+= 1
        #endif
        entries[index] = nil
        holes += 1
        if holes * 2 > entries.count { compact() }
        return true
    }

    /// Drops the holes into a new array sized for what is left, so that a list that once held a
    /// million observers does not keep a million entries' worth of memory.
    @inlinable
    mutating func compact() {
        #if DEBUG
        slotsVisited &+= entries.count
        #endif
        var live: [ObserverEntry<State>?] = []
        live.reserveCapacity(entries.count - holes)
        for case let entry? in entries { live.append(entry) }
        entries = live
        holes = 0
        if entries.count > Self.linearLimit {
            reindex()
        } else {
            positions = [:]
        }
    }

    /// Rebuilds `positions` for a list without holes.
    @inlinable
    mutating func reindex() {
        #if DEBUG
        slotsVisited &+= entries.count
        #endif
        var positions: [Int: Int] = [:]
        positions.reserveCapacity(entries.count)
        for (index, entry) in entries.enumerated() {
            if let entry { positions[entry.id] = index }
        }
        self.positions = positions
    }

    /// Calls `body` with each observer still there, in joining order: the state owner's loop on
    /// every state. A `for … in` over the list would first copy it, retaining its index as well.
    /// `mutating` though it changes nothing, so that the state's owner lends its list in place
    /// rather than copying it out, a retain and a release of the entries on every state (the
    /// `service` workload measures it); `body` must not reach the list (observers join and
    /// leave through the queue, never while it is called).
    @inlinable
    mutating func forEachObserver(_ body: (ObserverEntry<State>) -> Void) {
        var index = 0
        while index < entries.count {
            if let entry = entries[index] { body(entry) }
            index &+= 1
        }
    }

    @inlinable
    func makeIterator() -> Iterator {
        Iterator(entries.makeIterator())
    }

    /// The observers still there, in joining order.
    @usableFromInline
    struct Iterator: IteratorProtocol {
        @usableFromInline var base: IndexingIterator<[ObserverEntry<State>?]>

        @inlinable
        init(_ base: IndexingIterator<[ObserverEntry<State>?]>) {
            self.base = base
        }

        @inlinable
        mutating func next() -> ObserverEntry<State>? {
            while let entry = base.next() {
                if let entry { return entry }
            }
            return nil
        }
    }
}
