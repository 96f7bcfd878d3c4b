import NIOConcurrencyHelpers

/// A value behind a lock: the server's own shared state (connection counts, session handles,
/// the health check in flight).
///
/// A pthread mutex (`NIOLock`), not `Synchronization.Mutex`: ThreadSanitizer sees this one's
/// acquire and release, so a TSan run of the tests reports the races there are and none that are
/// not (it reports every access guarded by `Mutex` under contention, since the standard library
/// it lives in is not instrumented). No code but `body` runs while it is held.
final class LockedValue<Value: Sendable>: Sendable {
    private let box: NIOLockedValueBox<Value>

    init(_ value: Value) {
        box = NIOLockedValueBox(value)
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try box.withLockedValue(body)
    }
}
