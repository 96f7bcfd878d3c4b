/// One child feature alive inside a parent: its running feedbacks and its door.
///
/// A class, so that reaching a child from the tables that find it (a keyed feedback keeps two)
/// retains one reference, not each of its fields.
@usableFromInline
final class LiveChild<State: Sendable, Event: Sendable> {
    @usableFromInline let reactors: [ChildReactor<State, Event>]
    @usableFromInline let effects: ChildDoor<Event>

    @inlinable
    init(feedbacks: [Feedback<State, Event>], parent: any ParentDoor<Event>) {
        self.reactors = feedbacks.map { $0.makeChildReactor() }
        self.effects = ChildDoor(parent: parent)
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
