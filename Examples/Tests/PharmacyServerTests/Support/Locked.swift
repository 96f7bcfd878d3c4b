import Foundation

/// A value behind an `NSLock`: the test support's lock.
///
/// Not `Synchronization.Mutex`: under contention (50 sessions ending at once) ThreadSanitizer
/// reports races inside `Mutex.withLock` that are not there (the library is not built for TSan);
/// a pthread-based lock is what TSan understands, at no cost that matters in tests.
// @unchecked: `value` is read and written only inside `lock`.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: sending Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
