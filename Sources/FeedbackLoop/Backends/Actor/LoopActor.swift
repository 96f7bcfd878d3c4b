/// The `actor` backend: an actor owns the machine (state, reducer, feedbacks, observers), so the
/// compiler, not a convention, keeps every other thread away from the state.
///
/// `send` never runs the reducer on the caller's thread. It appends to the shared queue under the
/// loop's lock and, only when the actor is not already draining, wakes it with one task. The actor
/// then drains everything that has arrived, batch after batch, in one turn. A burst of events
/// therefore costs one lock and one array append each, plus one task per burst, instead of one
/// actor hop (or one `AsyncStream` element, ~3 µs here) per event. An idle loop parks no task.
@usableFromInline
actor LoopActor<State: Sendable, Event: Sendable> {
    @usableFromInline let machine: Machine<State, Event>

    @usableFromInline
    init(machine: sending Machine<State, Event>) {
        self.machine = machine
    }

    /// Drains until the queue is empty, then yields once before giving up the drain role: a
    /// sender in full flow refills the queue meanwhile, so one wake-up task serves a whole burst
    /// instead of one task per event.
    @inlinable
    func drain(_ core: LoopCore<State, Event>, first: QueueItem<State, Event>) async {
        guard core.drainLoop(machine, first: first, releaseWhenEmpty: false) == .emptyHeld else { return }
        await Task.yield()
        core.drainLoop(machine, first: nil)
    }

    @usableFromInline
    func tearDown(_ core: LoopCore<State, Event>) {
        core.tearDown(machine)
    }
}
