/// What a running feedback starts and cancels effects through: the loop itself (``Effects``) or,
/// for a child feature lifted into a parent, the child's own door (``ChildEffects``), which maps
/// the child's effects into the parent's and ends them with the child.
///
/// Every feedback constructor is written once, generic over its door, so a loop's own feedbacks
/// stay specialised on ``Effects`` while the same rules run unchanged inside a parent.
@usableFromInline
protocol EffectDoor<Event> {
    associatedtype Event: Sendable

    /// Starts `effect`; the handle to cancel it, or `nil` when there is nothing to cancel.
    func start(_ effect: Effect<Event>) -> EffectHandle?

    /// Starts an effect of a child feature nested below this door's feedback, which lives as long
    /// as `life` (see ``ChildLife``).
    func start(_ effect: Effect<Event>, in life: ChildLife?) -> EffectHandle?

    /// The life of the child feature this door belongs to; `nil` for the loop's own door.
    var life: ChildLife? { get }

    /// Cancels a running effect; does nothing if it already ended.
    func cancel(_ handle: EffectHandle)

    /// Whether a step without an event is the feedback's first one. At the top of a loop it
    /// always is; inside a parent it may instead be a change the parent made to the child's state.
    var isFirstStep: Bool { get }

    /// Counts an event addressed to a child that no longer exists, and logs it when `warn`.
    func childEventOrphaned(_ description: @autoclosure () -> String, warn: Bool)
}

extension Effects: EffectDoor {
    @inlinable
    var isFirstStep: Bool { true }

    @inlinable
    var life: ChildLife? { nil }

    @usableFromInline
    func childEventOrphaned(_ description: @autoclosure () -> String, warn: Bool) {
        core.lock.withLock { $0.countOrphaned() }
        core.instrumentation?.hooks.onOrphan?(description())
        guard warn else { return }
        core.configuration.logger.warning(
            "event for a child that no longer exists was dropped; later ones are counted in statistics",
            metadata: ["loop": "\(core.configuration.label)", "event": "\(description())"])
    }
}

/// A child feature's feedback, running inside a parent: the same rule as ``Reactor``, with the
/// child's door in place of the loop's.
@usableFromInline
typealias ChildReactor<State: Sendable, Event: Sendable> = (State, Event?, ChildEffects<Event>) -> Void

/// The door of one child feature living inside a parent: every effect its feedbacks start goes
/// through here, is mapped into the parent's events and remembered, so that when the child goes
/// away ``endAll()`` cancels every one of them, whichever feedback started it, and ends the
/// child's ``ChildLife``, which silences the events of those that had already finished. Touched
/// only by the drain-role holder, like every reactor's memory.
@usableFromInline
final class ChildEffects<Event: Sendable>: EffectDoor {
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

    /// Whether the child has gone (``endAll()``).
    @inlinable
    var ended: Bool {
        ownLife.endedItself
    }

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

/// The parent's door, lent to the children of a lifted feedback for the length of one step.
///
/// A lifted feedback sets ``current`` before it runs its children's reactors and restores it after
/// (to `nil` outside any step), so a child never keeps its parent (and through it the loop) alive
/// between steps. It holds the
/// door's address, not a copy: storing the door retained the loop's core and clearing it released
/// it, on every step, for the rare step whose child starts or cancels an effect.
@usableFromInline
final class LentDoor<Door: EffectDoor> {
    /// Valid only inside ``with(_:_:)``, which restores the previous value before the door it
    /// points at goes.
    @exclusivity(unchecked) @usableFromInline var current: UnsafePointer<Door>?

    @inlinable
    init() {}

    @inlinable
    func with(_ door: Door, _ body: () -> Void) {
        withUnsafePointer(to: door) { door in
            let outer = current
            current = door
            body()
            current = outer
        }
    }

    @inlinable
    var door: Door {
        guard let current else {
            // Children's reactors run only inside `with`; nothing else holds a child's door.
            preconditionFailure("a child feature's effect was started outside its parent's step")
        }
        return current.pointee
    }
}

/// One child's way into its parent: the lent door and the child's event embedding (which, for a
/// keyed child, knows the child's id).
@usableFromInline
final class EmbeddedDoor<ChildEvent: Sendable, Door: EffectDoor>: ParentDoor {
    @usableFromInline let lent: LentDoor<Door>
    @usableFromInline let embed: @Sendable (ChildEvent) -> Door.Event
    /// See ``EventPath/embedFromEffect``.
    @usableFromInline let embedFromEffect: (@Sendable (ChildEvent, EffectLiveness) -> Door.Event)?

    @inlinable
    init(
        lent: LentDoor<Door>, embed: @escaping @Sendable (ChildEvent) -> Door.Event,
        embedFromEffect: (@Sendable (ChildEvent, EffectLiveness) -> Door.Event)? = nil
    ) {
        self.lent = lent
        self.embed = embed
        self.embedFromEffect = embedFromEffect
    }

    @inlinable
    func start(_ effect: Effect<ChildEvent>, in life: ChildLife?) -> EffectHandle? {
        if let embedFromEffect { return lent.door.start(effect.map(withLiveness: embedFromEffect), in: life) }
        return lent.door.start(effect.map(embed), in: life)
    }

    @inlinable
    var enclosingLife: ChildLife? {
        lent.door.life
    }

    @inlinable
    func cancel(_ handle: EffectHandle) {
        lent.door.cancel(handle)
    }

    @inlinable
    func childEventOrphaned(_ description: @autoclosure () -> String, warn: Bool) {
        lent.door.childEventOrphaned(description(), warn: warn)
    }
}

/// One child feature alive inside a parent: its running feedbacks and its door.
///
/// A class, so that reaching a child from the tables that find it (a keyed feedback keeps two)
/// retains one reference, not each of its fields.
@usableFromInline
final class LiveChild<State: Sendable, Event: Sendable> {
    @usableFromInline let reactors: [ChildReactor<State, Event>]
    @usableFromInline let effects: ChildEffects<Event>

    @inlinable
    init(feedbacks: [Feedback<State, Event>], parent: any ParentDoor<Event>) {
        self.reactors = feedbacks.map { $0.makeChildReactor() }
        self.effects = ChildEffects(parent: parent)
    }

    /// Shows the child a step: its first one (`appeared`), one of its own events, or a change
    /// its parent made.
    @inlinable
    @inline(__always)  // Into a keyed feedback's `visit`, on every event for a child.
    func step(_ state: State, _ event: Event?, appeared: Bool) {
        effects.isFirstStep = appeared
        // By index: `for reactor in reactors` retains the array for its iterator.
        for index in reactors.indices {
            reactors[index](state, event, effects)
        }
    }

    /// The child went away: every effect it runs is cancelled.
    @inlinable
    func end() {
        effects.endAll()
    }
}
