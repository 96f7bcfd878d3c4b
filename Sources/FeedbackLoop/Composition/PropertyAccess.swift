/// A writable key path, applied at the cost of a stored property's access where it can be.
///
/// Applying a key path goes through the runtime: reading one (`swift_getAtKeyPath`) runs generic
/// metadata lookups and value witnesses, and writing through one costs less but still a runtime
/// call, on every call, however simple the path (the `keyed-children` workload measures both). A scope applies its key path on
/// every event (the reducer writes the child, the lifted feedbacks read it), which made the key
/// path a fifth of an event's cost into 1,000 keyed children. When the path is a chain of stored
/// properties of a struct, `MemoryLayout.offset(of:)` gives the child's offset inside the parent,
/// and the access is a pointer step from the parent's storage; any other path (a computed
/// property, a class on the way, an optional chain) is applied as a key path.
@usableFromInline
struct PropertyAccess<Root, Value>: Sendable {
    @usableFromInline let keyPath: WritableKeyPath<Root, Value> & Sendable
    /// The value's offset in `Root`'s storage; `nil` when the key path is not a plain stored
    /// property path (then `offset(of:)` says a pointer step would not be equivalent).
    @usableFromInline let offset: Int?

    @inlinable
    init(_ keyPath: WritableKeyPath<Root, Value> & Sendable) {
        self.keyPath = keyPath
        self.offset = MemoryLayout<Root>.offset(of: keyPath)
    }

    @inlinable
    func read(_ root: Root) -> Value {
        guard let offset else { return root[keyPath: keyPath] }
        // `offset(of:)` promises that the value lives at `offset` inside `Root`'s inline storage,
        // so the memory there is bound to `Value`.
        return withUnsafePointer(to: root) { pointer in
            UnsafeRawPointer(pointer).advanced(by: offset).assumingMemoryBound(to: Value.self).pointee
        }
    }

    /// Calls `body` with the address of the value inside `root`, valid during the call only.
    /// Reading through it borrows what `read` would copy: a retain and a release for every
    /// reference the value holds (an ``IdentifiedStates`` holds three), on every event.
    @inlinable
    func withPointer<Result>(in root: Root, _ body: (UnsafePointer<Value>) throws -> Result) rethrows -> Result {
        guard let offset else { return try withUnsafePointer(to: root[keyPath: keyPath], body) }
        return try withUnsafePointer(to: root) { pointer in
            try body(UnsafeRawPointer(pointer).advanced(by: offset).assumingMemoryBound(to: Value.self))
        }
    }

    @inlinable
    func modify<Result>(_ root: inout Root, _ body: (inout Value) throws -> Result) rethrows -> Result {
        guard let offset else { return try body(&root[keyPath: keyPath]) }
        return try withUnsafeMutablePointer(to: &root) { pointer in
            try body(&UnsafeMutableRawPointer(pointer).advanced(by: offset).assumingMemoryBound(to: Value.self).pointee)
        }
    }
}
