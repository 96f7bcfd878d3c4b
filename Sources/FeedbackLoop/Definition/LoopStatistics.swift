/// Counters a ``Loop`` keeps about its own life, read with ``Loop/statistics``.
///
/// Nothing the loop refuses or drops goes uncounted: every event is either reduced or counted in
/// exactly one of the `eventsDropped…`/`eventsDiscarded…` counters or
/// ``eventsCancelledWhileWaiting``, one counter per ``DropReason``. Every effect that started is,
/// at any quiet moment, in exactly one of running, finished, cancelled or failed:
/// `effectsStarted == effectsRunning + effectsFinished + effectsCancelled + effectsFailed`.
public struct LoopStatistics: Sendable, Hashable, CustomStringConvertible {
    /// Events the reducer has run on.
    public var eventsReduced: Int = 0
    /// Events sent (or ``Loop/sendAndWait(_:)`` calls made) after ``Loop/stop()`` began, or after
    /// the loop was released, including events of a `.send` effect started as stop began.
    public var eventsDroppedAfterStop: Int = 0
    /// Externally sent events refused because a ``EventCapacity/bounded(_:)`` queue was full.
    public var eventsDroppedOverCapacity: Int = 0
    /// Events sent by effects that the loop had already cancelled, or that had already ended
    /// (a sink used after ``Sink/finish()``, or kept after its `.run` body returned), and events
    /// an effect had queued that were not yet reduced when the loop cancelled it.
    public var eventsDroppedFromCancelledEffects: Int = 0
    /// Events that were queued but not yet reduced when ``Loop/stop()`` began.
    public var eventsDiscardedAtStop: Int = 0
    /// ``Loop/sendAndWait(_:)`` calls whose task was cancelled while they waited for room in a
    /// full ``EventCapacity/bounded(_:)`` queue: their events were never queued
    /// (``DropReason/cancelledWhileWaiting``).
    public var eventsCancelledWhileWaiting: Int = 0
    /// Events addressed to a child feature that did not exist when they were reduced (see
    /// ``ChildScope`` and ``KeyedChildScope``): the reducer ran, but no child received them.
    /// Already counted in ``eventsReduced``.
    public var eventsOrphaned: Int = 0
    /// Effects started, of every kind but ``Effect/none``.
    public var effectsStarted: Int = 0
    /// Effects that completed by themselves.
    public var effectsFinished: Int = 0
    /// Effects the loop cancelled: their query changed or went away, or the loop stopped.
    public var effectsCancelled: Int = 0
    /// Effects whose `.run` body threw while still running.
    public var effectsFailed: Int = 0
    /// Effects started that have not yet finished, failed or been cancelled. A cancelled `.run`
    /// effect counts as cancelled at once, even while its task is still returning (``Loop/stop()``
    /// and ``Loop/waitUntilIdle()`` still wait for that task).
    public var effectsRunning: Int = 0

    public init() {}

    public var description: String {
        "reduced \(eventsReduced), dropped after stop \(eventsDroppedAfterStop), over capacity "
            + "\(eventsDroppedOverCapacity), from cancelled effects \(eventsDroppedFromCancelledEffects), "
            + "discarded at stop \(eventsDiscardedAtStop), cancelled while waiting \(eventsCancelledWhileWaiting), orphaned \(eventsOrphaned); effects started \(effectsStarted), finished "
            + "\(effectsFinished), cancelled \(effectsCancelled), failed \(effectsFailed), running \(effectsRunning)"
    }
}
