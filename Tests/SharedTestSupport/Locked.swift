import Foundation

/// A value behind an `NSLock`, for collecting what tests observe from many threads.
/// (NSLock rather than `Synchronization.Mutex`, which ThreadSanitizer misreads.)
public final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only read or written while `lock` is held.
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    public var current: Value { withLock { $0 } }
}

extension Locked where Value: RangeReplaceableCollection {
    public func append(_ element: Value.Element) { withLock { $0.append(element) } }
}

extension Locked where Value == Int {
    @discardableResult
    public func increment() -> Int { withLock { $0 += 1; return $0 } }
}
