import Synchronization

/// One life of a child feature inside a parent: from the step its state appears to the step it
/// goes away. A child that comes back under the same id, or an optional child set to `nil` and
/// back, is a new life.
///
/// Every effect a child starts carries its life in its ``EffectHandle``, so that an event is
/// judged by the life that sent it, not by whichever child holds the id when the event's turn
/// comes: once the life has ended, its effects' events are dropped (and counted) when they are
/// reduced, even those of effects that had already finished — a result sent with
/// ``Sink/finish(sending:)`` just before the child was removed, or the events of a `.send`
/// effect still queued. Without it, a child removed and added back under the same id in one batch
/// would reduce its predecessor's late answer.
///
/// A life inside another child ends with it: ``isEnded`` also asks the enclosing life, since the
/// outer child's end does not visit its own children one by one.
@usableFromInline
final class ChildLife: Sendable {
    /// The life of the child this one lives inside, if it is nested.
    @usableFromInline let outer: ChildLife?
    /// Set once, by the drain-role holder, when the child goes away; read when its effects'
    /// events are reduced (by the drain-role holder too, which the loop's lock hands from thread
    /// to thread).
    @usableFromInline let ended: Atomic<Bool>

    @inlinable
    init(outer: ChildLife?) {
        self.outer = outer
        self.ended = Atomic(false)
    }

    /// This life ended, or the one it lives inside did. Not inlinable: only events of a child's
    /// effects ask, and inlined into the owner's `receive` it made that too large to inline into
    /// every drain (W1 and W2 on `callback` paid for the call).
    @usableFromInline
    var isEnded: Bool {
        var life: ChildLife? = self
        while let current = life {
            if current.ended.load(ordering: .relaxed) { return true }
            life = current.outer
        }
        return false
    }

    @inlinable
    func end() {
        ended.store(true, ordering: .relaxed)
    }
}
