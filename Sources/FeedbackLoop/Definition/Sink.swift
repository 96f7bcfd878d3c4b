/// Where an effect or an event source sends its events.
///
/// Sending never blocks and never reduces in place: the event joins the loop's queue behind the
/// events already there. A sink belongs to one effect: once the loop has cancelled that effect
/// (its query changed or went away, or the loop stopped), everything sent through the sink is
/// dropped and counted, so a late answer can never overwrite newer state.
///
/// A `Sink` is `Sendable` and may be called from any thread or task.
public struct Sink<Event: Sendable>: Sendable {
    @usableFromInline let receiver: any EventReceiver<Event>
    @usableFromInline let handle: EffectHandle?

    @inlinable
    init(receiver: any EventReceiver<Event>, handle: EffectHandle?) {
        self.receiver = receiver
        self.handle = handle
    }

    /// Sends `event` into the loop.
    @inlinable
    public func callAsFunction(_ event: Event) {
        receiver.receive(event, from: handle)
    }

    /// Sends `event` into the loop. The same as calling the sink.
    @inlinable
    public func send(_ event: Event) {
        receiver.receive(event, from: handle)
    }

    /// Whether the loop has cancelled the effect this sink belongs to (or stopped).
    public var isCancelled: Bool {
        handle?.isCancelled ?? false
    }

    /// Tells the loop that a ``Effect/callback(_:)`` effect has completed by itself.
    ///
    /// A finished effect no longer counts as running, its ``Cancellation`` is not called, and
    /// events it sent before finishing are still reduced. `.run` effects finish when their body
    /// returns and need not call this. Calling it twice, or after cancellation, does nothing.
    public func finish() {
        guard let handle else { return }
        receiver.effectFinished(handle, error: nil)
    }
}

/// What a ``Sink`` delivers to: the loop's event queue.
@usableFromInline
protocol EventReceiver<Event>: AnyObject, Sendable {
    associatedtype Event: Sendable
    func receive(_ event: Event, from handle: EffectHandle?)
    func effectFinished(_ handle: EffectHandle, error: (any Error)?)
}
