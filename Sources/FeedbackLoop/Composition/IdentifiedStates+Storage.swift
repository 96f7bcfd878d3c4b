import Synchronization

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
    /// The revisions this directory's writer hands out next, `nextRevision..<revisionEnd`: a
    /// block of its lineage's that no other directory holds (see ``Lineage``). Unchecked, like
    /// `count`: only the writer that holds the directory alone takes from it.
    @exclusivity(unchecked) @usableFromInline var nextRevision: UInt64 = 0
    @exclusivity(unchecked) @usableFromInline var revisionEnd: UInt64 = 0

    @inlinable
    init(capacity: Int) {
        self.capacity = capacity
        self.chunks = .allocate(capacity: capacity)
    }

    /// A directory of its own with room for `capacity` chunks, holding this one's chunks and
    /// revisions, which are moved out of this one (left empty).
    @inlinable
    func moved(capacity: Int) -> DirectoryStorage {
        let moved = DirectoryStorage(capacity: Swift.max(capacity, count))
        moved.chunks.moveInitialize(from: chunks, count: count)
        moved.count = count
        count = 0
        (moved.nextRevision, moved.revisionEnd) = (nextRevision, revisionEnd)
        (nextRevision, revisionEnd) = (0, 0)
        return moved
    }

    /// A revision no write in `lineage` had before, for the writer that holds this directory
    /// alone; never 0.
    @inlinable
    @inline(__always)
    func takeRevision(from lineage: Lineage) -> UInt64 {
        if nextRevision == revisionEnd { reserveRevisions(from: lineage) }
        defer { nextRevision &+= 1 }
        return nextRevision
    }

    /// Once in thousands of writes: out of line, to keep every write's path short.
    @inlinable
    @inline(never)
    func reserveRevisions(from lineage: Lineage) {
        (nextRevision, revisionEnd) = lineage.reserveBlock()
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

/// The source of an ``IdentifiedStates`` value's revisions, shared by all its copies, which may
/// be written on different threads at once.
///
/// It hands revisions out in blocks, each to one directory of chunks, whose writer then takes
/// them one by one without a lock: a directory is written only by a writer that holds it alone
/// (a copy that shares it copies it first, and the copy gets a block of its own), so no two
/// writes get the same revision. An atomic add per write cost every event into a keyed child
/// a locked instruction, which waits for the processor's pending stores: one instruction to
/// callgrind, about 5 % of the drain's time on the wall clock (`perf` on the `keyed-children`
/// workload, `actor`).
@usableFromInline
final class Lineage: Sendable {
    /// The revisions handed out so far, in blocks.
    @usableFromInline let counter = Atomic<UInt64>(0)

    /// Revisions per block: a new directory takes one at its first write, so a loop whose
    /// collection is copied once per batch takes one every few thousand writes.
    @inlinable
    static var blockSize: UInt64 { 1 << 12 }

    @inlinable
    init() {}

    /// Revisions no write in this lineage had before and no other block holds, `first..<end`;
    /// never 0.
    @inlinable
    func reserveBlock() -> (first: UInt64, end: UInt64) {
        let last = counter.wrappingAdd(Self.blockSize, ordering: .relaxed).newValue
        return (last &- Self.blockSize &+ 1, last &+ 1)
    }
}
