/// Stops a piece of callback-style work: a timer, a subscription, a network request.
///
/// A `Cancellation` is what a ``Effect/callback(_:)`` effect or an ``Feedback/events(register:)``
/// source returns: the loop calls ``cancel()`` exactly once when the effect's query changes or
/// goes away, or when the loop stops. Calling ``cancel()`` again does nothing, so a
/// `Cancellation` can be shared with other code safely.
public final class Cancellation: Sendable {
    private let action: Lock<(@Sendable () -> Void)?>

    /// A cancellation that runs `action` the first time ``cancel()`` is called, on that caller's
    /// thread.
    public init(_ action: @escaping @Sendable () -> Void) {
        self.action = Lock(action)
    }

    /// A cancellation with nothing to stop.
    public static var none: Cancellation { Cancellation {} }

    /// Whether ``cancel()`` has been called.
    public var isCancelled: Bool { action.withLock { $0 == nil } }

    /// Runs the cancellation action, once; later calls return at once.
    public func cancel() {
        let action = self.action.withLock { action -> (@Sendable () -> Void)? in
            defer { action = nil }
            return action
        }
        action?()
    }
}
