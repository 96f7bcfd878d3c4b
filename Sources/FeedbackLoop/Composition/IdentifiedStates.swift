import Synchronization

/// The states of a collection of child features, each under its own id, in insertion order —
/// an ordered dictionary that remembers which children each change touched.
///
/// Use it with ``KeyedChildScope`` for "N of the same feature": orders on a desk, downloads, chat
/// rooms. Read and write it like a dictionary:
///
/// ```swift
/// state.orders[id: order.id] = Order.State(order)   // adds a child (at the end) or replaces one
/// state.orders[id: id]?.note = "ring twice"         // changes one child
/// state.orders[id: id] = nil                        // removes it: its effects are cancelled
/// for (id, order) in state.orders { … }              // in insertion order
/// ```
///
/// ## Why not a dictionary
/// Every write stamps the child it touched with a revision, unique within this collection and
/// every copy of it, so the lifted feedbacks of ``KeyedChildScope`` find the children that
/// changed since the last state they saw without looking at the others, and run those
/// children's feedbacks only. Storage is split into chunks of 32 children, so that changing one
/// child of a collection whose previous value is still shared (the loop keeps the last published
/// state) copies one chunk, not the whole collection.
///
/// Equality compares ids, order and values, never revisions.
public struct IdentifiedStates<ID: Hashable & Sendable, Value: Sendable>: Sendable {
    @usableFromInline
    struct Slot: Sendable {
        @usableFromInline var id: ID
        /// `nil` once the child was removed; the slot stays until the next compaction.
        @usableFromInline var value: Value?
        @usableFromInline var revision: UInt64

        @inlinable
        init(id: ID, value: Value?, revision: UInt64) {
            self.id = id
            self.value = value
            self.revision = revision
        }
    }

    /// Up to ``chunkSize`` slots and the revision of the last write into any of them.
    @usableFromInline
    struct Chunk: Sendable {
        @usableFromInline var revision: UInt64
        @usableFromInline var slots: [Slot]

        @inlinable
        init(revision: UInt64) {
            self.revision = revision
            self.slots = []
            slots.reserveCapacity(IdentifiedStates.chunkSize)
        }

        /// Lets `body` change the value at `offset` and stamps it and the chunk with `revision`,
        /// in one access to the slots: reaching them as `chunks[chunk].slots[offset]` for the
        /// take, the put back and each stamp checks both buffers' uniqueness every time (four
        /// accesses an event into a keyed child; the `keyed-children` workload counts them).
        @inlinable
        mutating func modify<Result>(
            _ offset: Int, revision next: UInt64, _ body: (inout Value) throws -> Result
        ) rethrows -> Result? {
            revision = next
            return try slots.withUnsafeMutableBufferPointer { slots in
                // Taken out so that `body` changes a unique copy.
                guard var value = slots[offset].value.take() else { return nil }
                defer {
                    slots[offset].value = value
                    slots[offset].revision = next
                }
                return try body(&value)
            }
        }
    }

    @inlinable static var chunkShift: Int { 5 }
    @inlinable static var chunkSize: Int { 1 << chunkShift }

    @usableFromInline var chunks: [Chunk] = []
    /// Live ids and their slots.
    @usableFromInline var index: [ID: Int] = [:]
    /// Slots in use, removed ones included.
    @usableFromInline var slotCount = 0
    /// The revision of the last write anywhere.
    @usableFromInline var revision: UInt64 = 0
    /// The revision before the last write, and the slot that write touched: when a reader last
    /// saw `previousRevision`, that one slot is all that changed since.
    @usableFromInline var previousRevision: UInt64 = 0
    @usableFromInline var lastWrittenSlot = -1
    /// Where revisions come from: shared by every copy of this collection, so that no two
    /// writes, in any copy, get the same revision.
    @usableFromInline var lineage = Lineage()

    /// An empty collection.
    public init() {}

    /// The children of `elements`, in order. A repeated id replaces the earlier value in its
    /// place.
    public init(_ elements: some Sequence<(ID, Value)>) {
        for (id, value) in elements {
            self[id: id] = value
        }
    }

    /// The number of children.
    @inlinable
    public var count: Int { index.count }

    /// Whether there is no child.
    @inlinable
    public var isEmpty: Bool { index.isEmpty }

    /// The ids, in order.
    public var ids: [ID] { map(\.id) }

    /// The values, in order.
    public var values: [Value] { map(\.value) }

    /// Whether a child with this id exists.
    @inlinable
    public func contains(id: ID) -> Bool {
        index[id] != nil
    }

    /// The child with this id; setting a value adds it at the end or replaces it in place,
    /// setting `nil` removes it.
    @inlinable
    public subscript(id id: ID) -> Value? {
        get {
            guard let slot = index[id] else { return nil }
            return chunks[slot >> Self.chunkShift].slots[slot & (Self.chunkSize - 1)].value
        }
        _modify {
            if let slot = index[id] {
                let chunk = slot >> Self.chunkShift
                let offset = slot & (Self.chunkSize - 1)
                // Taken out so that the caller's change happens on a unique copy.
                var value = chunks[chunk].slots[offset].value.take()
                defer {
                    if let value {
                        chunks[chunk].slots[offset].value = value
                        stamp(chunk: chunk, offset: offset)
                    } else {
                        removeSlot(id: id, slot: slot)
                    }
                }
                yield &value
            } else {
                var value: Value? = nil
                defer {
                    if let value { append(value, id: id) }
                }
                yield &value
            }
        }
    }

    /// Changes the child with this id in place and returns what `body` returned, or returns
    /// `nil` without calling `body` if there is no such child. One lookup, where
    /// `self[id: id]?.change()` makes two.
    @inlinable
    @inline(__always)  // Into the reducer: a keyed scope's every child event comes through here.
    public mutating func modify<Result>(id: ID, _ body: (inout Value) throws -> Result) rethrows -> Result? {
        guard let slot = index[id] else { return nil }
        let next = lineage.next()
        defer { wrote(slot: slot, revision: next) }
        return try chunks[slot >> Self.chunkShift].modify(slot & (Self.chunkSize - 1), revision: next, body)
    }

    /// Removes the child with this id and returns its value, or `nil` if there was none.
    @inlinable
    @discardableResult
    public mutating func removeValue(forID id: ID) -> Value? {
        guard let slot = index[id] else { return nil }
        let value = chunks[slot >> Self.chunkShift].slots[slot & (Self.chunkSize - 1)].value
        removeSlot(id: id, slot: slot)
        return value
    }

    /// Removes every child.
    public mutating func removeAll() {
        chunks = []
        index = [:]
        slotCount = 0
        previousRevision = revision
        revision = lineage.next()
        lastWrittenSlot = -1
    }

    @inlinable
    mutating func stamp(chunk: Int, offset: Int) {
        let next = lineage.next()
        chunks[chunk].slots[offset].revision = next
        chunks[chunk].revision = next
        wrote(slot: chunk << Self.chunkShift | offset, revision: next)
    }

    @inlinable
    mutating func wrote(slot: Int, revision next: UInt64) {
        previousRevision = revision
        revision = next
        lastWrittenSlot = slot
    }

    @inlinable
    mutating func append(_ value: Value, id: ID) {
        let slot = slotCount
        let chunk = slot >> Self.chunkShift
        let next = lineage.next()
        if chunk == chunks.count {
            chunks.append(Chunk(revision: next))
        }
        chunks[chunk].slots.append(Slot(id: id, value: value, revision: next))
        chunks[chunk].revision = next
        wrote(slot: slot, revision: next)
        index[id] = slot
        slotCount += 1
    }

    @inlinable
    mutating func removeSlot(id: ID, slot: Int) {
        index[id] = nil
        let chunk = slot >> Self.chunkShift
        let offset = slot & (Self.chunkSize - 1)
        chunks[chunk].slots[offset].value = nil
        stamp(chunk: chunk, offset: offset)
        let holes = slotCount - index.count
        if holes >= Self.chunkSize && holes * 2 > slotCount { compact() }
    }

    /// Drops the slots of removed children once they are the majority. Every remaining child
    /// moves and is stamped anew, so the next feedback step looks at all of them once.
    @usableFromInline
    mutating func compact() {
        let live = Array(self)
        chunks = []
        index = [:]
        slotCount = 0
        for (id, value) in live { append(value, id: id) }
    }
}

/// The source of an ``IdentifiedStates`` value's revisions, shared by all its copies.
@usableFromInline
final class Lineage: Sendable {
    @usableFromInline let counter = Atomic<UInt64>(0)

    @inlinable
    init() {}

    /// A revision no write in this lineage had before; never 0.
    @inlinable
    func next() -> UInt64 {
        counter.wrappingAdd(1, ordering: .relaxed).newValue
    }
}

extension IdentifiedStates: Sequence {
    /// Iterates the children in insertion order.
    public struct Iterator: IteratorProtocol {
        @usableFromInline let states: IdentifiedStates
        @usableFromInline var slot = 0

        @inlinable
        init(_ states: IdentifiedStates) {
            self.states = states
        }

        /// The next child in insertion order, or `nil` after the last.
        @inlinable
        public mutating func next() -> (id: ID, value: Value)? {
            while slot < states.slotCount {
                let entry = states.chunks[slot >> IdentifiedStates.chunkShift].slots[slot & (IdentifiedStates.chunkSize - 1)]
                slot += 1
                if let value = entry.value { return (entry.id, value) }
            }
            return nil
        }
    }

    /// Iterates the children in insertion order.
    @inlinable
    public func makeIterator() -> Iterator {
        Iterator(self)
    }

    /// The number of children.
    @inlinable
    public var underestimatedCount: Int { count }
}

extension IdentifiedStates: Equatable where Value: Equatable {
    /// Whether both hold the same ids, in the same order, with equal values.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.lineage === rhs.lineage && lhs.revision == rhs.revision { return true }
        return zip(lhs, rhs).allSatisfy { $0.id == $1.id && $0.value == $1.value }
    }
}

extension IdentifiedStates: Hashable where Value: Hashable {
    /// Hashes the ids and values in order, as `==` compares them.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for (id, value) in self {
            hasher.combine(id)
            hasher.combine(value)
        }
    }
}

extension IdentifiedStates: ExpressibleByDictionaryLiteral {
    /// The children of the literal, in order. A repeated id replaces the earlier value.
    public init(dictionaryLiteral elements: (ID, Value)...) {
        self.init(elements)
    }
}

extension IdentifiedStates: CustomStringConvertible, CustomReflectable {
    /// The children in order, as `[id: value, …]`.
    public var description: String {
        "[" + map { "\($0.id): \($0.value)" }.joined(separator: ", ") + "]"
    }

    /// Shown as a dictionary (in order), without the revisions.
    public var customMirror: Mirror {
        Mirror(self, unlabeledChildren: map { (key: $0.id, value: $0.value) }, displayStyle: .dictionary)
    }
}
