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
/// state) copies one chunk, not the whole collection; the directory of chunks that the write
/// needs of its own is, in a loop, the one the state published before held, brought up to date.
///
/// So a value that a write replaced or removed may outlive every copy that held it: until the
/// collection that was written is copied again, or ends. In a loop, that is until the next
/// batch of events writes to the collection, where it used to be the next publish.
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

    @usableFromInline typealias Chunk = ChunkStorage<Slot>
    @usableFromInline typealias Directory = DirectoryStorage<Chunk>

    @inlinable static var chunkShift: Int { 5 }
    @inlinable static var chunkSize: Int { 1 << chunkShift }

    // nonisolated(unsafe): a directory and its chunks are written only through references their
    // writer holds alone (`isKnownUniquelyReferenced`, see `withUniqueSlots`); once shared
    // between copies, which may be on other threads, neither ever changes again.
    @usableFromInline nonisolated(unsafe) var directory = Directory(capacity: 0)
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
            return self.slot(slot).value
        }
        _modify {
            if let slot = index[id] {
                // Taken out so that the caller's change happens on a unique copy.
                var value = withUniqueSlots(chunk: slot >> Self.chunkShift) { _, slots in
                    slots[slot & (Self.chunkSize - 1)].value.take()
                }
                defer {
                    if value != nil {
                        store(value, at: slot)
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
        let next = takeRevision()
        defer { wrote(slot: slot, revision: next) }
        let offset = slot & (Self.chunkSize - 1)
        // The take, the put back and both stamps in one access to the chunk.
        return try withUniqueChunk(slot >> Self.chunkShift) { header, slots in
            header.pointee.revision = next
            // Taken out so that `body` changes a unique copy.
            guard var value = slots[offset].value.take() else { return nil }
            defer {
                slots[offset].value = value
                slots[offset].revision = next
            }
            return try body(&value)
        }
    }

    /// Removes the child with this id and returns its value, or `nil` if there was none.
    @inlinable
    @discardableResult
    public mutating func removeValue(forID id: ID) -> Value? {
        guard let slot = index[id] else { return nil }
        let value = self.slot(slot).value
        removeSlot(id: id, slot: slot)
        return value
    }

    /// Removes every child.
    public mutating func removeAll() {
        directory = Directory(capacity: 0)
        index = [:]
        slotCount = 0
        previousRevision = revision
        revision = takeRevision()
        lastWrittenSlot = -1
    }

    // MARK: Storage

    /// The number of chunks.
    @inlinable
    var chunkCount: Int { directory.count }

    /// The revision of the last write into `chunk`.
    @inlinable
    func chunkRevision(_ chunk: Int) -> UInt64 {
        // Through the pointer: `header` is a class's stored property, checked for exclusive
        // access at run time on every read.
        directory.chunks[chunk].withUnsafeMutablePointerToHeader { $0.pointee.revision }
    }

    /// The number of slots in `chunk`, removed ones included.
    @inlinable
    func chunkSlotCount(_ chunk: Int) -> Int {
        directory.chunks[chunk].withUnsafeMutablePointerToHeader { $0.pointee.count }
    }

    /// The slot at `slot`, counted from the first chunk's first.
    @inlinable
    func slot(_ slot: Int) -> Slot {
        directory.chunks[slot >> Self.chunkShift].withUnsafeMutablePointerToElements { $0[slot & (Self.chunkSize - 1)] }
    }

    /// Calls `body` with the header and slots of `chunk`, copying first the directory and the
    /// chunk if another copy of the collection shares them.
    @inlinable
    mutating func withUniqueSlots<Result>(
        chunk: Int, _ body: (UnsafeMutablePointer<ChunkHeader>, UnsafeMutablePointer<Slot>) throws -> Result
    ) rethrows -> Result {
        makeDirectoryUnique()
        return try withUniqueChunk(chunk, body)
    }

    /// ``withUniqueSlots(chunk:_:)`` for a writer whose directory is its own already (after
    /// ``takeRevision()``).
    @inlinable
    mutating func withUniqueChunk<Result>(
        _ chunk: Int, _ body: (UnsafeMutablePointer<ChunkHeader>, UnsafeMutablePointer<Slot>) throws -> Result
    ) rethrows -> Result {
        let chunks = directory.chunks
        if !isKnownUniquelyReferenced(&chunks[chunk]) {
            chunks[chunk] = chunks[chunk].copy(capacity: Self.chunkSize)
        }
        return try chunks[chunk].withUnsafeMutablePointers(body)
    }

    /// Copies the directory if another copy of the collection shares it (see
    /// ``DirectoryStorage``).
    @inlinable
    @inline(__always)
    mutating func makeDirectoryUnique() {
        if !isKnownUniquelyReferenced(&directory) {
            directory = directory.copyForWrite()
        }
    }

    /// A revision for a write, which no write to this collection or any copy of it had before;
    /// makes the directory this copy's own first, since revisions come from its block (see
    /// ``Lineage``).
    @inlinable
    @inline(__always)  // Into every write: as a call it cost a keyed child's event ~30 instructions.
    mutating func takeRevision() -> UInt64 {
        makeDirectoryUnique()
        return directory.takeRevision(from: lineage)
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
        let next = takeRevision()
        if chunk == chunkCount {
            if directory.count == directory.capacity {
                directory = directory.moved(capacity: Swift.max(2 * directory.capacity, 1))
            }
            (directory.chunks + chunk).initialize(to: Chunk.make(capacity: Self.chunkSize, revision: next))
            directory.count += 1
        }
        withUniqueChunk(chunk) { header, slots in
            (slots + header.pointee.count).initialize(to: Slot(id: id, value: value, revision: next))
            header.pointee.count += 1
            header.pointee.revision = next
        }
        wrote(slot: slot, revision: next)
        index[id] = slot
        slotCount += 1
    }

    /// Writes `value` into `slot` (`nil`: the child there was removed), stamped with a new
    /// revision, as are the slot's chunk and the collection.
    @inlinable
    mutating func store(_ value: Value?, at slot: Int) {
        let next = takeRevision()
        withUniqueChunk(slot >> Self.chunkShift) { header, slots in
            slots[slot & (Self.chunkSize - 1)].value = value
            slots[slot & (Self.chunkSize - 1)].revision = next
            header.pointee.revision = next
        }
        wrote(slot: slot, revision: next)
    }

    @inlinable
    mutating func removeSlot(id: ID, slot: Int) {
        index[id] = nil
        store(nil, at: slot)
        let holes = slotCount - index.count
        if holes >= Self.chunkSize && holes * 2 > slotCount { compact() }
    }

    /// Drops the slots of removed children once they are the majority. Every remaining child
    /// moves and is stamped anew, so the next feedback step looks at all of them once.
    @usableFromInline
    mutating func compact() {
        let live = Array(self)
        directory = Directory(capacity: 0)
        index = [:]
        slotCount = 0
        for (id, value) in live { append(value, id: id) }
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
                let entry = states.slot(slot)
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
