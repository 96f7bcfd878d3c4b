@testable import FeedbackLoop
import Testing

/// The sub-machine of observers a stop got to first (``ObserversAtStop``), driven directly: those
/// whose joining a stop discarded are set aside, one that left in the same items is not, and
/// teardown hands them over (once: a second hand-over traps, ``InvalidTransitionTests``).
@Suite("ObserversAtStop: observers set aside for the final state")
struct ObserversAtStopTests {
    static func observer(_ id: Int) -> ObserverEntry<Int> {
        ObserverEntry(id: id, onState: { _ in }, onStop: nil)
    }

    @Test func discardedJoinsAreSetAsideAndDiscardedLeavesUndoThem() {
        var observers = ObserversAtStop<Int>.collecting([])
        observers.setAside(Self.observer(1))
        let discarded: [QueueItem<Int, Int>] = [
            .addObserver(Self.observer(2)), .event(5, nil), .addObserver(Self.observer(3)), .removeObserver(2),
        ]
        observers.setAside(joiningIn: discarded)
        #expect(observers.handOver().map(\.id) == [1, 3])
        guard case .handedOver = observers else { Issue.record("still \(observers.stateName) after the hand-over"); return }
    }
}
