@testable import FeedbackLoop
import Testing

/// The queue's sub-machine (``Intake``), driven directly: the capacity it keeps, the batch it
/// hands the drain, and its close at stop (after which parking or closing again traps:
/// ``InvalidTransitionTests``).
@Suite("Intake: the queue, its capacity and its close at stop")
struct IntakeTests {
    typealias Queue = Intake<Int, Int>

    static func events(_ items: [QueueItem<Int, Int>]) -> [Int] {
        items.map { item in
            guard case .event(let event, _) = item else { return -1 }
            return event
        }
    }

    @Test func externalItemsAreHeldToTheCapacityUntilTheDrainTakesThem() {
        var intake = Queue(capacity: 2)
        let first = intake.reserveExternal()
        intake.append(.event(1, nil))
        let second = intake.reserveExternal()
        intake.append(.event(2, nil))
        let third = intake.reserveExternal()
        #expect(first && second)
        #expect(!third, "a third item went past a capacity of 2")
        #expect(intake.mustPark)
        intake.append(.event(3, nil))  // an effect's event: never held to the capacity
        var batch: [QueueItem<Int, Int>] = []
        intake.takeBatch(into: &batch)
        #expect(Self.events(batch) == [1, 2, 3])
        #expect(intake.isEmpty)
        let afterTheBatch = intake.reserveExternal()
        #expect(afterTheBatch, "the drain took the items, but their places were not given back")
    }

    @Test func parkedCallsJoinABatchOldestFirstUpToTheCapacity() async {
        let replies = LoopStateMachineTests.Replies()
        var intake = Queue(capacity: 2)
        for id in 1...3 {
            intake.park(ParkedSubmit(id: UInt64(id), event: id * 10, reply: await replies.make(id), cause: nil))
        }
        var batch: [QueueItem<Int, Int>] = []
        intake.takeBatch(into: &batch)
        let moved = batch.map { item -> Int in
            guard case .submit(let event, _) = item else { return -1 }
            return event
        }
        #expect(moved == [10, 20], "parked calls joined out of order or past the capacity")
        #expect(intake.parked.map(\.id) == [3])
        #expect(intake.mustPark, "a call arriving now would overtake the one still parked")
        let unparked = intake.unpark(id: 3)
        let again = intake.unpark(id: 3)
        #expect(unparked?.id == 3)
        #expect(again == nil, "a call was taken out of line twice")
        for id in 1...3 { replies.resume(id) }
    }

    @Test func closingHandsOutEverythingItHeld() async {
        let replies = LoopStateMachineTests.Replies()
        var intake = Queue(capacity: 1)
        _ = intake.reserveExternal()
        intake.append(.event(1, nil))
        intake.park(ParkedSubmit(id: 7, event: 70, reply: await replies.make(7), cause: nil))
        let (discarded, parked) = intake.close()
        #expect(Self.events(discarded) == [1])
        #expect(parked.map(\.id) == [7])
        #expect(intake.isEmpty)
        #expect(intake.isClosed)
        replies.resume(7)
    }

    @Test func eachReasonWarnsOnce() {
        var intake = Queue(capacity: 1)
        let overCapacity = [intake.firstWarningOverCapacity(), intake.firstWarningOverCapacity()]
        let afterStop = [intake.firstWarningAfterStop(), intake.firstWarningAfterStop()]
        #expect(overCapacity == [true, false])
        #expect(afterStop == [true, false])
    }

    @Test func observersGetIdsInTurn() {
        var intake = Queue(capacity: 1)
        let ids = [intake.observerID(), intake.observerID(), intake.observerID()]
        #expect(ids == [0, 1, 2])
    }

    @Test func anEmptyQueueGivesABurstsBuffersBack() {
        var intake = Queue(capacity: .max)
        for event in 0..<100 { intake.append(.event(event, nil)) }
        var batch: [QueueItem<Int, Int>] = []
        intake.takeBatch(into: &batch)
        batch.removeAll(keepingCapacity: true)
        intake.takeBatch(into: &batch)  // the burst's buffer is the queue's again, empty
        #expect(intake.items.capacity >= 100)
        intake.shrink(keeping: 10)
        #expect(intake.items.capacity < 100, "an idle queue kept a burst's buffer")
    }
}
