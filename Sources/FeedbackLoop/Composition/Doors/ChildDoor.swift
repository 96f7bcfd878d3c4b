/// A child feature's feedback, running inside a parent: the same rule as ``Reactor``, with the
/// child's door in place of the loop's.
@usableFromInline
typealias ChildReactor<State: Sendable, Event: Sendable> = (State, Event?, ChildDoor<Event>) -> Void

/// The door of one child feature living inside a parent: every effect its feedbacks start goes
/// through here, is mapped into the parent's events and remembered, so that when the child goes
/// away ``endAll()`` cancels every one of them, whichever feedback started it, and ends the
/// child's ``ChildLife``, which silences the events of those that had already finished. Touched
/// only by the drain-role holder, like every reactor's memory.
@usableFromInline
final class ChildDoor<Event: Sendable>: EffectDoor {
    @usableFromInline let parent: any ParentDoor<Event>
    /// This child's life; it ends with ``endAll()``, after which a slot that still names the
    /// child must not reach it.
    @usableFromInline let ownLife: ChildLife
    /// The child's effects that may still be running, by id. Ended ones are pruned in batches.
    @exclusivity(unchecked) @usableFromInline var running: [UInt64: EffectHandle] = [:]
    @exclusivity(unchecked) @usableFromInline var pruneAt = 16
    @exclusivity(unchecked) @usableFromInline var isFirstStep = true

    /// The door of a child that appears now, inside the parent step that lends `parent` its door.
    @inlinable
    init(parent: any ParentDoor<Event>) {
        self.parent = parent
        self.ownLife = ChildLife(outer: parent.enclosingLife)
    }

    @inlinable
    var life: ChildLife? { ownLife }

    /// Whether the child has gone (``endAll()``). The life says so too, for its effects' events;
    /// this copy is for the keyed feedback, which asks on every step of the child: the life is
    /// an object of its own, a cache miss an event among 1,000 children (`perf` on the
    /// `keyed-children` workload), where the door is written in the same step anyway.
    @exclusivity(unchecked) @usableFromInline private(set) var ended = false

    @inlinable
    func start(_ effect: Effect<Event>) -> EffectHandle? {
        start(effect, in: life)
    }

    /// Starts an effect of this child, or of a child nested in it (`life` is then that one's).
    @inlinable
    func start(_ effect: Effect<Event>, in life: ChildLife?) -> EffectHandle? {
        guard let handle = parent.start(effect, in: life) else { return nil }
        running[handle.id] = handle
        if running.count >= pruneAt {
            running = running.filter { $0.value.isRunning }
            pruneAt = max(16, running.count * 2)
        }
        return handle
    }

    @inlinable
    func cancel(_ handle: EffectHandle) {
        running.removeValue(forKey: handle.id)
        parent.cancel(handle)
    }

    @inlinable
    func childEventOrphaned(_ description: @autoclosure () -> String, warn: Bool) {
        parent.childEventOrphaned(description(), warn: warn)
    }

    /// The child went away: cancels every effect it still runs and ends its life. Their late
    /// events, and the queued events of those that had already finished, are dropped and counted
    /// like those of any cancelled effect.
    @inlinable
    func endAll() {
        ended = true
        ownLife.end()
        let running = self.running
        self.running = [:]
        for handle in running.values where handle.isRunning {
            parent.cancel(handle)
        }
    }
}

/// How a child's door reaches its parent's: the parent's door of the current step and the
/// function that turns the child's events into the parent's.
@usableFromInline
protocol ParentDoor<ChildEvent>: AnyObject {
    associatedtype ChildEvent: Sendable
    func start(_ effect: Effect<ChildEvent>, in life: ChildLife?) -> EffectHandle?
    func cancel(_ handle: EffectHandle)
    /// The life of the child the parent's door belongs to, if the parent is itself a child:
    /// read when a child appears, inside the parent's step.
    var enclosingLife: ChildLife? { get }
    func childEventOrphaned(_ description: @autoclosure () -> String, warn: Bool)
}
