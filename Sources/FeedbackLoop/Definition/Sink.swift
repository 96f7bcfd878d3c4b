/// Where an effect or an event source sends its events.
///
/// Sending never blocks: the event joins the loop's queue behind the events already there (on
/// ``Backend/callback`` the sending thread may then drain the queue itself, if no other thread
/// is draining). A sink belongs to one effect, and only while that effect runs: once the loop has
/// cancelled the effect (its query changed or went away, or the loop stopped), or the effect has
/// ended (its `.run` body returned, or it called ``finish()``), everything sent through the sink
/// is dropped and counted in ``LoopStatistics/eventsDroppedFromCancelledEffects``. A late answer
/// therefore never overwrites newer state, even from a sink that escaped its effect.
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

    /// Ends the effect by itself, with `event` as its last word: the effect counts as finished
    /// (never cancelled) *before* the event is queued, so the event is reduced whatever it does to
    /// the state — even when it moves the state off the query that started this effect, which
    /// would otherwise cancel the effect while it is still inside `send`. Code after this call
    /// (cleanup, an audit write) runs undisturbed, identically on every backend.
    ///
    /// The way for an effect to deliver its result. If the loop cancelled the effect first, the
    /// event is dropped and counted like any late event. Anything sent through the sink
    /// afterwards is dropped and counted. A `.run` effect's task still counts toward
    /// ``Loop/stop()`` and ``Loop/waitUntilIdle()`` until its body returns; when the loop stops
    /// meanwhile, that task is cancelled like every other.
    @inlinable
    public func finish(sending event: Event) {
        guard let handle else { return }
        receiver.finish(handle, sending: event)
    }

    /// Ends the effect by itself, without a last event.
    ///
    /// A ``Effect/callback(_:)`` effect that completes on its own calls this so that the loop
    /// no longer counts it as running (``Loop/waitUntilIdle()`` waits for running effects); its
    /// ``Cancellation`` is then never called. Events it sent before finishing are still reduced;
    /// events sent afterwards are dropped and counted. `.run` effects finish when their body
    /// returns and need not call this. Calling it twice, or after cancellation, does nothing.
    public func finish() {
        guard let handle else { return }
        receiver.finish(handle, sending: nil)
    }
}

/// What a ``Sink`` delivers to: the loop's event queue.
@usableFromInline
protocol EventReceiver<Event>: AnyObject, Sendable {
    associatedtype Event: Sendable
    func receive(_ event: Event, from handle: EffectHandle?)
    func finish(_ handle: EffectHandle, sending event: Event?)
}
