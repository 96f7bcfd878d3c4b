import FeedbackLoop

/// A count shared between a scenario and the threads it starts, behind the core's `Lock`
/// (ThreadSanitizer-clean under `-DTSAN`).
final class LockedCounter: Sendable {
    private let value = Lock(0)

    func withLock<Result>(_ body: (inout Int) -> Result) -> Result {
        value.withLock { body(&$0) }
    }
}
