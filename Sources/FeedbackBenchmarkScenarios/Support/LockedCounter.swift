import Synchronization

/// A count shared between a scenario and the threads it starts.
final class LockedCounter: Sendable {
    private let value = Mutex(0)

    func withLock<Result>(_ body: (inout Int) -> Result) -> Result {
        value.withLock { body(&$0) }
    }
}
