import Synchronization

/// Stops a piece of callback-style work: a timer, a subscription, a network request.
///
/// A `Cancellation` is what a ``Effect/callback(_:)`` effect or an ``Feedback/events(register:)``
/// source returns: the loop calls ``cancel()`` exactly once when the effect's query changes or
/// goes away, or when the loop stops. Calling ``cancel()`` again does nothing, so a
/// `Cancellation` can be shared with other code safely.
public final class Cancellation: Sendable {
    /// Set once, by the first ``cancel()``: only the caller that sets it runs `action`.
    private let cancelled = Atomic<Bool>(false)
    /// Written once, in `init`, and only read after: immutable, so no lock. An atomic flag rather
    /// than a lock around an optional closure: a generic lock's unspecialised `deinit` ran
    /// metadata lookups for every effect a loop started (W3 with a `.callback` effect). The closure (and what it
    /// captured) goes with the `Cancellation`; the loop lets go of its reference once it has
    /// called ``cancel()``.
    private let action: @Sendable () -> Void

    /// A cancellation that runs `action` the first time ``cancel()`` is called, on that caller's
    /// thread.
    public init(_ action: @escaping @Sendable () -> Void) {
        self.action = action
    }

    /// A cancellation with nothing to stop.
    public static var none: Cancellation { Cancellation {} }

    /// Whether ``cancel()`` has been called.
    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Runs the cancellation action, once; later calls return at once.
    public func cancel() {
        guard !cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        action()
    }
}
