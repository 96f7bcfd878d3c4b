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
                    if let value {
                        let next = lineage.next()
                        withUniqueSlots(chunk: slot >> Self.chunkShift) { header, slots in
                            slots[slot & (Self.chunkSize - 1)].value = value
                            slots[slot & (Self.chunkSize - 1)].revision = next
                            header.pointee.revision = next
                        }
                        wrote(slot: slot, revision: next)
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
        let offset = slot & (Self.chunkSize - 1)
        // The take, the put back and both stamps in one access to the chunk.
        return try withUniqueSlots(chunk: slot >> Self.chunkShift) { header, slots in
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
        revision = lineage.next()
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
        if chunk == chunkCount {
            makeDirectoryUnique()
            if directory.count == directory.capacity {
                directory = directory.moved(capacity: Swift.max(2 * directory.capacity, 1))
            }
            (directory.chunks + chunk).initialize(to: Chunk.make(capacity: Self.chunkSize, revision: next))
            directory.count += 1
        }
        withUniqueSlots(chunk: chunk) { header, slots in
            (slots + header.pointee.count).initialize(to: Slot(id: id, value: value, revision: next))
            header.pointee.count += 1
            header.pointee.revision = next
        }
        wrote(slot: slot, revision: next)
        index[id] = slot
        slotCount += 1
    }

    @inlinable
    mutating func removeSlot(id: ID, slot: Int) {
        index[id] = nil
        let next = lineage.next()
        withUniqueSlots(chunk: slot >> Self.chunkShift) { header, slots in
            slots[slot & (Self.chunkSize - 1)].value = nil
            slots[slot & (Self.chunkSize - 1)].revision = next
            header.pointee.revision = next
        }
        wrote(slot: slot, revision: next)
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

/// A chunk's slot count and the revision of the last write into any of its slots.
@usableFromInline
struct ChunkHeader {
    @usableFromInline var count: Int
    @usableFromInline var revision: UInt64

    @inlinable
    init(count: Int, revision: UInt64) {
        self.count = count
        self.revision = revision
    }
}

/// The slots of an ``IdentifiedStates`` chunk, shared by the copies of the collection that did
/// not write to them since they were copied.
///
/// A buffer of our own rather than an `Array`, so that the copy a write makes of a shared chunk
/// is code specialised for the slot type: an `Array`'s copy goes through the run-time's value
/// witnesses, element by element (the `keyed-children` workload on `callback`, which copies on
/// every event, measures it). Generic over the slot itself, not over the collection's `ID` and
/// `Value`: its `deinit` runs unspecialised, and finds the slot's metadata among its own generic
/// arguments instead of looking it up on every chunk freed.
@usableFromInline
final class ChunkStorage<Slot>: ManagedBuffer<ChunkHeader, Slot> {
    @inlinable
    static func make(capacity: Int, revision: UInt64) -> ChunkStorage {
        unsafeDowncast(
            create(minimumCapacity: capacity) { _ in ChunkHeader(count: 0, revision: revision) },
            to: ChunkStorage.self)
    }

    /// A chunk of its own with room for `capacity` slots, holding copies of these.
    @inlinable
    func copy(capacity: Int) -> ChunkStorage {
        withUnsafeMutablePointers { header, slots in
            let copy = ChunkStorage.make(capacity: capacity, revision: header.pointee.revision)
            copy.withUnsafeMutablePointers { copyHeader, copySlots in
                for offset in 0..<header.pointee.count {
                    (copySlots + offset).initialize(to: slots[offset])
                }
                copyHeader.pointee.count = header.pointee.count
            }
            return copy
        }
    }

    deinit {
        withUnsafeMutablePointers { header, slots in
            _ = slots.deinitialize(count: header.pointee.count)
        }
    }
}

/// The chunks of an ``IdentifiedStates``, in order, a reference each.
///
/// A write into a collection whose directory another copy shares (the loop's published state)
/// needs a directory of its own. Retaining every chunk into a new one, and releasing them all
/// when the published copy is replaced, was two thirds of an event into 1,000 keyed children on
/// `callback`, which publishes after every event (the `keyed-children` workload). So a
/// directory made as a copy remembers the one it was copied from (``previous``), and the next
/// copy made of it takes that one back if nothing else holds it any more — the loop released
/// it with the state published before — and brings it up to date by replacing the chunks that
/// differ, usually one. Two directories then take turns, and an event retains and releases a
/// handful of references instead of two per chunk.
///
/// What this costs: the directory a copy was made from lives on, with the chunks only it still
/// holds (the values that the writes since replaced or removed), until the next copy is made
/// or the collection ends. In a loop, the values a batch of events replaced go at the next
/// batch's first write to the collection instead of when the state published before the batch
/// is replaced.
@usableFromInline
final class DirectoryStorage<Chunk: AnyObject> {
    @usableFromInline let chunks: UnsafeMutablePointer<Chunk>
    @usableFromInline let capacity: Int
    // Unchecked: a directory changes only through a reference its writer holds alone (see
    // `IdentifiedStates.makeDirectoryUnique`), except `previous`, which is atomic.
    @exclusivity(unchecked) @usableFromInline var count = 0
    /// The directory this one was copied from, retained by hand, or `nil`: what the next copy
    /// made of this one may reuse. Atomic, because copies of the collection that share this
    /// directory may be written on other threads at once; one of them takes it.
    @usableFromInline let previous = Atomic<UnsafeMutableRawPointer?>(nil)

    @inlinable
    init(capacity: Int) {
        self.capacity = capacity
        self.chunks = .allocate(capacity: capacity)
    }

    /// A directory of its own with room for `capacity` chunks, holding this one's chunks, which
    /// are moved out of this one (left empty).
    @inlinable
    func moved(capacity: Int) -> DirectoryStorage {
        let moved = DirectoryStorage(capacity: Swift.max(capacity, count))
        moved.chunks.moveInitialize(from: chunks, count: count)
        moved.count = count
        count = 0
        return moved
    }

    /// A directory with this one's chunks for a writer whose copy of the collection shares this
    /// one: the directory this one was copied from if nobody else holds it, brought up to date,
    /// or else a new one. Either remembers this one, for the copy after.
    @inlinable
    @inline(never)  // Once per batch at most; inlined, it made every write's path longer.
    func copyForWrite() -> DirectoryStorage {
        let copy: DirectoryStorage
        if var reused = takePrevious(), isKnownUniquelyReferenced(&reused), reused.capacity >= count {
            reused.update(to: self)
            copy = reused
        } else {
            copy = DirectoryStorage(capacity: capacity)
            for chunk in 0..<count {
                (copy.chunks + chunk).initialize(to: chunks[chunk])
            }
            copy.count = count
        }
        copy.remember(self)
        return copy
    }

    /// Makes this directory (which its caller holds alone) hold `other`'s chunks, replacing
    /// only those that differ.
    @inlinable
    func update(to other: DirectoryStorage) {
        let kept = Swift.min(count, other.count)
        for chunk in 0..<kept where chunks[chunk] !== other.chunks[chunk] {
            chunks[chunk] = other.chunks[chunk]
        }
        if count > kept {
            (chunks + kept).deinitialize(count: count - kept)
        }
        for chunk in kept..<other.count {
            (chunks + chunk).initialize(to: other.chunks[chunk])
        }
        count = other.count
    }

    /// The directory this one was copied from, now the caller's, if it is still remembered.
    @inlinable
    func takePrevious() -> DirectoryStorage? {
        guard let taken = previous.exchange(nil, ordering: .acquiring) else { return nil }
        return Unmanaged<DirectoryStorage>.fromOpaque(taken).takeRetainedValue()
    }

    /// Remembers `directory` as the one this one was copied from, in place of any other.
    @inlinable
    func remember(_ directory: DirectoryStorage) {
        let retained = Unmanaged.passRetained(directory).toOpaque()
        if let replaced = previous.exchange(retained, ordering: .acquiringAndReleasing) {
            Unmanaged<DirectoryStorage>.fromOpaque(replaced).release()
        }
    }

    deinit {
        if let remembered = previous.load(ordering: .acquiring) {
            Unmanaged<DirectoryStorage>.fromOpaque(remembered).release()
        }
        chunks.deinitialize(count: count)
        chunks.deallocate()
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
