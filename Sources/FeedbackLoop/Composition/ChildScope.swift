/// A child feature — its own `State`, `Event`, reducer and feedbacks, written as if it ran alone —
/// embedded in a parent: where its state lives (``StatePath``) and how its events travel
/// (``EventPath``).
///
/// ```swift
/// enum App {
///     struct State: Sendable { var login = Login.State(); var pharmacies: Pharmacies.State? }
///     enum Event: Sendable { case login(Login.Event), pharmacies(Pharmacies.Event), signOut }
///
///     static let pharmacies = ChildScope(
///         state: StatePath(\State.pharmacies),
///         event: EventPath(embed: Event.pharmacies, extract: { if case .pharmacies(let e) = $0 { e } else { nil } }))
///
///     static func reduce(_ state: inout State, _ event: Event) {
///         pharmacies.reduce(&state, event, with: Pharmacies.reduce)   // the child's events
///         switch event { case .signOut: state.pharmacies = nil  /* … */ }
///     }
///
///     static func feedbacks(_ env: Environment) -> [Feedback<State, Event>] {
///         [pharmacies.feedback(Pharmacies.feedbacks(env.pharmacies)) /* , the parent's own */]
///     }
/// }
/// ```
///
/// ## What the lifted feedbacks see
/// The child's feedbacks see only the child's state and send the parent's events. While the
/// child exists they run on every step of the parent, as they would in a loop of their own:
/// with the child's event when the step reduced one, and without an event when the parent
/// changed the child's state itself (a `custom` feedback is shown only the child's own events).
/// When the child's state is `Equatable`, steps that leave it unchanged are skipped, unless they
/// reduced one of its events. Give a child with a `lensing` feedback an `Equatable` state: that
/// feedback restarts its effect on every step it is shown.
///
/// ## Lifetime and cancellation
/// The child appears when its state does (an optional becomes non-nil, the enum enters the
/// case): its feedbacks start fresh, as at the start of a loop. When its state goes away, every
/// effect the child started is cancelled in that step, whichever of its feedbacks started it,
/// including `custom` and `events` ones; events those effects send afterwards, or had sent and
/// were still queued (those of effects that had already finished too), are dropped and counted in
/// ``LoopStatistics/eventsDroppedFromCancelledEffects``. A child that appears again later, even
/// in the same batch of events, is a new child that none of them reaches. Effects keep every
/// other guarantee of a loop of their own.
///
/// ## Orphaned events
/// An event for the child that is reduced while the child does not exist (it went away before
/// the event's turn came) reaches no child: ``reduce(_:_:with:)`` leaves the state alone, and
/// the lifted feedback counts it in ``LoopStatistics/eventsOrphaned`` and logs the first one at
/// warning level. An event that makes the parent remove the child, or create it, is not orphaned.
public struct ChildScope<ParentState: Sendable, ParentEvent: Sendable, ChildState: Sendable, ChildEvent: Sendable>: Sendable {
    /// Where the child's state lives; the child exists while this finds a value.
    public let state: StatePath<ParentState, ChildState>
    /// How the child's events are wrapped in the parent's, and found again.
    public let event: EventPath<ParentEvent, ChildEvent>

    /// A child whose state `state` finds in the parent's and whose events `event` wraps.
    public init(state: StatePath<ParentState, ChildState>, event: EventPath<ParentEvent, ChildEvent>) {
        self.state = state
        self.event = event
    }

    /// Runs the child's reducer on the child's state if `event` is one of the child's and the
    /// child exists. Returns whether it ran; an event for a child that does not exist changes
    /// nothing (the lifted feedback counts it as orphaned).
    ///
    /// Call it from the parent's reducer, before or after the parent's own rules for the event:
    /// before, if the parent reacts to the child's new state.
    @inlinable
    @discardableResult
    public func reduce(
        _ parent: inout ParentState,
        _ parentEvent: ParentEvent,
        with reduce: (inout ChildState, ChildEvent) -> Void
    ) -> Bool {
        guard let childEvent = event.extract(parentEvent) else { return false }
        return state.modify(&parent) { reduce(&$0, childEvent) }
    }

    /// The child's reducer as a reducer of the parent that handles the child's events and
    /// ignores the rest; see ``reduce(_:_:with:)``.
    public func reducer(
        _ reduce: @escaping @Sendable (inout ChildState, ChildEvent) -> Void
    ) -> @Sendable (inout ParentState, ParentEvent) -> Void {
        { parent, event in self.reduce(&parent, event, with: reduce) }
    }

    /// The child's feedbacks as one feedback of the parent. See ``ChildScope`` for what they see
    /// and when their effects end.
    @inlinable
    public func feedback(_ feedbacks: [Feedback<ChildState, ChildEvent>]) -> Feedback<ParentState, ParentEvent> {
        let scope = self
        return Feedback(
            makeReactor: { scope.reactor(feedbacks, changed: nil) },
            makeChildReactor: { scope.reactor(feedbacks, changed: nil) })
    }

    /// The child's feedbacks as one feedback of the parent, skipping the parent's steps that
    /// leave the child's state equal to what the child last saw, unless they reduced one of its
    /// events.
    @inlinable
    public func feedback(_ feedbacks: [Feedback<ChildState, ChildEvent>]) -> Feedback<ParentState, ParentEvent>
    where ChildState: Equatable {
        let scope = self
        return Feedback(
            makeReactor: { scope.reactor(feedbacks, changed: { $0 != $1 }) },
            makeChildReactor: { scope.reactor(feedbacks, changed: { $0 != $1 }) })
    }

    @usableFromInline
    struct Memory {
        @usableFromInline var child: LiveChild<ChildState, ChildEvent>?
        @usableFromInline var last: ChildState?
        @usableFromInline var warnedOrphan = false

        @inlinable
        init() {}
    }

    @inlinable
    func reactor<Door: EffectDoor<ParentEvent>>(
        _ feedbacks: [Feedback<ChildState, ChildEvent>],
        changed: (@Sendable (ChildState, ChildState) -> Bool)?
    ) -> (ParentState, ParentEvent?, Door) -> Void {
        let memory = ReactorMemory(Memory())
        let lent = LentDoor<Door>()
        let parentDoor = EmbeddedDoor<ChildEvent, Door>(lent: lent, embed: event.embed, embedFromEffect: event.embedFromEffect)
        let scope = self
        return { parent, parentEvent, door in
            let childEvent = parentEvent.flatMap(scope.event.extract)
            let childState = scope.state.extract(parent)
            lent.with(door) {
                switch (memory.value.child, childState) {
                case (nil, nil):
                    if let childEvent {
                        door.childEventOrphaned(String(describing: childEvent), warn: !memory.value.warnedOrphan)
                        memory.value.warnedOrphan = true
                    }
                case (let child?, nil):
                    memory.value.child = nil
                    memory.value.last = nil
                    child.end()
                case (nil, let state?):
                    let child = LiveChild(feedbacks: feedbacks, parent: parentDoor)
                    memory.value.child = child
                    if changed != nil { memory.value.last = state }
                    child.step(state, nil, appeared: true)
                case (let child?, let state?):
                    if let changed, childEvent == nil {
                        guard let last = memory.value.last, changed(last, state) else { return }
                    }
                    if changed != nil { memory.value.last = state }
                    child.step(state, childEvent, appeared: false)
                }
            }
        }
    }
}
