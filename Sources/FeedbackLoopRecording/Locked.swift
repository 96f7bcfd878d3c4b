import Foundation

/// A value and the lock that guards it.
///
/// Shared, package-wide, by recording and the test kit. `NSLock` rather than
/// `Synchronization.Mutex`: neither is on a hot path, and
/// ThreadSanitizer understands `NSLock` (it reports false races inside `Mutex`), so the
/// project's TSan runs stay clean without a second lock implementation.
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only read or written inside `withLock`, which holds `lock`.
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
