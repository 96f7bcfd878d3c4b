/// The door through which a running feedback starts and cancels effects.
@usableFromInline
struct LoopDoor<State: Sendable, Event: Sendable> {
    @usableFromInline let engine: LoopEngine<State, Event>
    @usableFromInline let feedback: Int

    @inlinable
    init(engine: LoopEngine<State, Event>, feedback: Int) {
        self.engine = engine
        self.feedback = feedback
    }

    /// Starts `effect`; the handle to cancel it, or `nil` when there is nothing to cancel.
    @inlinable
    func start(_ effect: Effect<Event>) -> EffectHandle? {
        engine.start(effect, feedback: feedback)
    }

    /// Starts an effect of a child feature lifted into this feedback, which lives as long as
    /// `life`.
    @inlinable
    func start(_ effect: Effect<Event>, in life: ChildLife?) -> EffectHandle? {
        engine.start(effect, feedback: feedback, life: life)
    }

    /// Cancels a running effect; does nothing if it already ended.
    @inlinable
    func cancel(_ handle: EffectHandle) {
        engine.cancel(handle)
    }
}


extension LoopDoor: EffectDoor {
    @inlinable
    var isFirstStep: Bool { true }

    @inlinable
    var life: ChildLife? { nil }

    @usableFromInline
    func childEventOrphaned(_ description: @autoclosure () -> String, warn: Bool) {
        engine.lock.withLock { $0.countOrphaned() }
        engine.instrumentation?.hooks.onOrphan?(description())
        guard warn else { return }
        engine.configuration.logger.warning(
            "event for a child that no longer exists was dropped; later ones are counted in statistics",
            metadata: ["loop": "\(engine.configuration.label)", "event": "\(description())"])
    }
}
