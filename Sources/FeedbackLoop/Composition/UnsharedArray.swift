/// A growable array that one object owns and never hands out: a keyed feedback's tables of what
/// it saw last time.
///
/// An `Array` stored in a class checks that its buffer is unique on every write (a runtime call,
/// which the callgrind `keyed-children` workload counts), because the compiler cannot prove that nobody else holds the buffer. A
/// keyed feedback writes two tables on every event. This storage has a single holder by
/// construction: its owner keeps it in a `let` and never hands it out, so there is nothing to
/// check. Like the rest of a keyed feedback, only the drain-role holder touches it. Indices are
/// checked: out of range traps with a message, as with `Array`.
@usableFromInline
final class UnsharedArray<Element> {
    @exclusivity(unchecked) @usableFromInline var elements: UnsafeMutablePointer<Element>
    @exclusivity(unchecked) @usableFromInline var capacity: Int
    @exclusivity(unchecked) @usableFromInline var count = 0

    @inlinable
    init(capacity: Int = 0) {
        self.capacity = Swift.max(capacity, 1)
        self.elements = .allocate(capacity: self.capacity)
    }

    deinit {
        elements.deinitialize(count: count)
        elements.deallocate()
    }

    @inlinable
    subscript(index: Int) -> Element {
        get {
            precondition(index >= 0 && index < count, "UnsharedArray index \(index) out of range 0..<\(count)")
            return elements[index]
        }
        _modify {
            precondition(index >= 0 && index < count, "UnsharedArray index \(index) out of range 0..<\(count)")
            yield &elements[index]
        }
    }

    @inlinable
    func append(_ element: Element) {
        if count == capacity { grow(to: capacity * 2) }
        (elements + count).initialize(to: element)
        count += 1
    }

    /// Makes room for `minimumCapacity` elements in all.
    @inlinable
    func reserveCapacity(_ minimumCapacity: Int) {
        if minimumCapacity > capacity { grow(to: minimumCapacity) }
    }

    /// Removes the elements from `newCount` on; nothing if there are no more than that.
    @inlinable
    func truncate(to newCount: Int) {
        guard newCount < count else { return }
        precondition(newCount >= 0, "UnsharedArray cannot truncate to \(newCount) elements")
        (elements + newCount).deinitialize(count: count - newCount)
        count = newCount
    }

    @usableFromInline
    func grow(to newCapacity: Int) {
        let grown = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
        grown.moveInitialize(from: elements, count: count)
        elements.deallocate()
        elements = grown
        capacity = newCapacity
    }
}
