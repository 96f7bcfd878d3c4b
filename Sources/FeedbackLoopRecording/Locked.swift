import Foundation

/// A value and the lock that guards it.
///
/// `NSLock` rather than `Synchronization.Mutex`: recording is not on a hot path, and
/// ThreadSanitizer understands `NSLock` (it reports false races inside `Mutex`), so the
/// project's TSan runs stay clean without a second lock implementation.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only read or written inside `withLock`, which holds `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
