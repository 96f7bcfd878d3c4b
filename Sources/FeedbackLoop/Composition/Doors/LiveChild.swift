/// One child feature alive inside a parent: its running feedbacks and its door.
///
/// A class, so that reaching a child from the tables that find it (a keyed feedback keeps two)
/// retains one reference, not each of its fields.
@usableFromInline
final class LiveChild<State: Sendable, Event: Sendable> {
    /// The child's feedbacks, in order; `nil` when it has none.
    @usableFromInline let reactors: ReactorChain<State, Event>?
    @usableFromInline let effects: ChildDoor<Event>

    @inlinable
    init(feedbacks: [Feedback<State, Event>], parent: any ParentDoor<Event>) {
        self.reactors = ReactorChain.make(feedbacks[...])
        self.effects = ChildDoor(parent: parent)
    }

    /// Shows the child a step: its first one (`appeared`), one of its own events, or a change
    /// its parent made.
    @inlinable
    @inline(__always)  // Into a keyed feedback's `visit`, on every event for a child.
    func step(_ state: State, _ event: Event?, appeared: Bool) {
        effects.isFirstStep = appeared
        reactors?.run(state, event, effects)
    }

    /// The child went away: every effect it runs is cancelled.
    @inlinable
    func end() {
        effects.endAll()
    }
}

/// A child's running feedbacks, one link each, in order.
///
/// Links rather than an array: a closure taken out of an array (or any buffer) is retained and
/// released around its call, since the call might replace the element, while one in a `let` of
/// an object the caller holds is called as it is. A child steps on every event addressed to it,
/// and those two atomic reference counts were a sixth of an event into 1,000 keyed children on
/// the wall clock (`perf` on the `keyed-children` workload, `actor`).
@usableFromInline
final class ReactorChain<State: Sendable, Event: Sendable> {
    @usableFromInline let reactor: ChildReactor<State, Event>
    @usableFromInline let next: ReactorChain?

    @inlinable
    init(_ reactor: @escaping ChildReactor<State, Event>, next: ReactorChain?) {
        self.reactor = reactor
        self.next = next
    }

    /// The running feedbacks of `feedbacks`, made in order. Each reactor goes from its feedback
    /// straight into its link: passed through an array (or any generic code) on the way, it
    /// would be stored behind one more reabstraction thunk, called on every step.
    @inlinable
    static func make(_ feedbacks: ArraySlice<Feedback<State, Event>>) -> ReactorChain? {
        guard let first = feedbacks.first else { return nil }
        let reactor = first.makeChildReactor()
        return ReactorChain(reactor, next: make(feedbacks.dropFirst()))
    }

    /// Calls this link's feedback, then the ones after it. Inlined into the child's step, so
    /// that a child with one feedback, the usual case, makes no call of its own for it.
    @inlinable
    @inline(__always)
    func run(_ state: State, _ event: Event?, _ door: ChildDoor<Event>) {
        reactor(state, event, door)
        next?.runOutOfLine(state, event, door)
    }

    /// ``run(_:_:_:)`` for the links after the first.
    @inlinable
    @inline(never)
    func runOutOfLine(_ state: State, _ event: Event?, _ door: ChildDoor<Event>) {
        run(state, event, door)
    }
}
