@testable import FeedbackLoop
import Testing

/// The sub-machine of observers a stop got to first (``ObserversAtStop``), driven directly: those
/// whose joining a stop discarded are set aside, one that left in the same items is not, and
/// teardown hands them over once.
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

    @Test func settingAsideAfterTheHandOverTraps() async {
        let trap = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var observers = ObserversAtStop<Int>.collecting([])
            _ = observers.handOver()
            observers.setAside(ObserverEntry(id: 1, onState: { _ in }, onStop: nil))
        }
        #expect(trap?.standardError.contains("ObserversAtStop.setAside(_:) in state handedOver") == true, "\(trap?.standardError ?? "")")
    }

    @Test func handingOverTwiceTraps() async {
        let trap = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var observers = ObserversAtStop<Int>.collecting([])
            _ = observers.handOver()
            _ = observers.handOver()
        }
        #expect(trap?.standardError.contains("ObserversAtStop.handOver() in state handedOver") == true, "\(trap?.standardError ?? "")")
    }
}
