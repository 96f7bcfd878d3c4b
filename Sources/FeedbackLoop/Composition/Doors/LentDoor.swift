/// The parent's door, lent to the children of a lifted feedback for the length of one step.
///
/// A lifted feedback sets ``current`` before it runs its children's reactors and restores it after
/// (to `nil` outside any step), so a child never keeps its parent (and through it the loop) alive
/// between steps. It holds the
/// door's address, not a copy: storing the door retained the loop's engine and clearing it released
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
