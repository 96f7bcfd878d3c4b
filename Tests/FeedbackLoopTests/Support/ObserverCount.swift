@testable import FeedbackLoop

extension LoopEngine {
    /// How many observers the state's owner holds, for tests that check an observer or a `states`
    /// subscriber really left. Read where the owner lives: on the actor, or, on the other
    /// backends, under the lock at a moment nobody holds the drain role (the loop idle or torn
    /// down), which orders the read after the last drain; while a drain is under way, it waits
    /// for the loop's next progress and looks again.
    func observerCount() async -> Int {
        switch driver {
        case .actor(.own(let actor)): return await actor.observerCount()
        case .actor(.executor(let actor)): return await actor.observerCount()
        case .callback(let driver): return await observerCount(of: driver.owner)
        case .stream(let driver): return await observerCount(of: driver.owner)
        }
    }

    private func observerCount(of owner: StateOwner<State, Event>) async -> Int {
        while true {
            let count = lock.withLock { state -> Int? in
                state.phase == .draining || state.phase == .stopping ? nil : owner.observers.count
            }
            if let count { return count }
            await waitUntil { $0.phase != .draining && $0.phase != .stopping }
        }
    }
}

extension OwnerActor {
    func observerCount() -> Int {
        owner.observers.count
    }
}
