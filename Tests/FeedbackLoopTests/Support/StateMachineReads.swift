@testable import FeedbackLoop

extension LoopStateMachine {
    /// What waits in the queue, for tests that check its items or the buffer it keeps.
    var items: [QueueItem<State, Event>] { intake.items }
}

extension RunningEffects {
    /// How many entries the registry's table takes before it grows, for tests that check that a
    /// burst's table is given back.
    var capacity: Int { registry.capacity }
}
