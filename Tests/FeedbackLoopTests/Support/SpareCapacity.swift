@testable import FeedbackLoop

extension LoopEngine {
    /// The capacity of the owner's spare queue buffer, for tests that check a burst's peak is
    /// given back. Read where the state's owner lives: on the actor, or under the lock — which orders
    /// this read after the last drain — once the loop is idle (the caller waited for it).
    func spareCapacity() async -> Int {
        switch driver {
        case .callback(let driver): lock.withLock { _ in driver.owner.spare.capacity }
        case .actor(.own(let actor)): await actor.spareCapacity()
        case .actor(.executor(let actor)): await actor.spareCapacity()
        case .stream(let driver): lock.withLock { _ in driver.owner.spare.capacity }
        }
    }
}

extension OwnerActor {
    func spareCapacity() -> Int {
        owner.spare.capacity
    }
}
