/// What a running feedback starts and cancels effects through: the loop itself (``LoopDoor``) or,
/// for a child feature lifted into a parent, the child's own door (``ChildDoor``), which maps
/// the child's effects into the parent's and ends them with the child.
///
/// Every feedback constructor is written once, generic over its door, so a loop's own feedbacks
/// stay specialised on ``LoopDoor`` while the same rules run unchanged inside a parent.
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
