@testable import FeedbackLoop
import Testing

/// Direct tests of the lock-guarded state machine every backend shares (``LoopStateMachine``): random
/// sequences of its transitions compared with a plain queue — no lost wake-up (the drain role is
/// released only with an empty queue, and the next item takes it again), the capacity bound, FIFO
/// parked submits, and every item and every continuation handed back exactly once.
@Suite("LoopStateMachine: the drain role, capacity and parked submits")
struct LoopStateMachineTests {
    typealias Machine = LoopStateMachine<Int, Int>

    /// Real continuations for `.submit` items: each is a task suspended until the test resumes it.
    final class Replies: Sendable {
        let parked = Locked<[Int: UnsafeContinuation<Int, any Error>]>([:])
        let outcomes = Locked<[Int: Int]>([:])  // id → how many times it was resumed

        func make(_ id: Int) async -> UnsafeContinuation<Int, any Error> {
            let latch = CountdownLatch()
            Task {
                _ = try? await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Int, any Error>) in
                    parked.withLock { $0[id] = continuation }
                    latch.increment()
                }
            }
            await latch.wait(for: 1)
            return parked.withLock { $0[id]! }
        }

        /// Resumes the continuation of `id`, once; counts every attempt.
        func resume(_ id: Int) {
            outcomes.withLock { $0[id, default: 0] += 1 }
            if let continuation = parked.withLock({ $0.removeValue(forKey: id) }) {
                continuation.resume(throwing: LoopError.stopped)
            }
        }
    }

    /// What the plain model says each item is.
    enum Item: Hashable { case event(Int), submit(Int) }

    static func item(_ queueItem: QueueItem<Int, Int>) -> Item {
        switch queueItem {
        case .event(let event, _): .event(event)
        case .submit(let event, _): .submit(event)
        default: fatalError("only events and submits are queued in these tests")
        }
    }

    @Test(arguments: 0..<Scale.of(300))
    func randomTransitionsMatchAPlainQueue(seed: Int) async throws {
        var rng = SplitMix64(seed: UInt64(seed) &* 0x51_7CC1_B727 &+ 3)
        let capacity = 1 + rng.int(4)
        var machine = Machine(initial: 0, capacity: capacity)
        let replies = Replies()

        // The plain model.
        var queue: [Item] = []
        var parked: [Int] = []
        var draining = false
        var stopped = false
        var externalQueued = 0
        var counted = (afterStop: 0, overCapacity: 0, discarded: 0, cancelledWhileWaiting: 0)
        var handled: [Item] = []  // everything the drainer got, in order
        var sentInOrder: [Item] = []  // everything admitted, in admission order
        var next = 0

        for _ in 0..<(1 + rng.int(60)) {
            next += 1
            switch rng.int(7) {
            case 0, 1:  // an external send
                let action = machine.enqueue(.event(next, nil), external: true)
                if stopped {
                    guard case .dropped(.afterStop, _) = action else { Issue.record("send after stop: \(action)"); return }
                    counted.afterStop += 1
                } else if !draining {
                    guard case .drain(let item) = action, Self.item(item) == .event(next) else { Issue.record("idle send: \(action)"); return }
                    draining = true
                    handled.append(.event(next))
                    sentInOrder.append(.event(next))
                } else if externalQueued >= capacity {
                    guard case .dropped(.overCapacity, _) = action else { Issue.record("full send: \(action)"); return }
                    counted.overCapacity += 1
                } else {
                    guard case .queued = action else { Issue.record("send: \(action)"); return }
                    queue.append(.event(next))
                    externalQueued += 1
                    sentInOrder.append(.event(next))
                }
            case 2:  // an event from the loop's own effect: never refused for capacity
                let action = machine.enqueue(.event(next, nil), external: false)
                if stopped {
                    guard case .dropped(.afterStop, _) = action else { Issue.record("internal after stop: \(action)"); return }
                    counted.afterStop += 1
                } else if !draining {
                    guard case .drain = action else { Issue.record("idle internal: \(action)"); return }
                    draining = true
                    handled.append(.event(next))
                    sentInOrder.append(.event(next))
                } else {
                    guard case .queued = action else { Issue.record("internal: \(action)"); return }
                    queue.append(.event(next))
                    sentInOrder.append(.event(next))
                }
            case 3:  // sendAndWait
                let reply = await replies.make(next)
                let action = machine.submit(next, id: UInt64(next), reply: reply)
                if stopped {
                    guard case .stopped = action else { Issue.record("submit after stop: \(action)"); return }
                    counted.afterStop += 1
                    replies.resume(next)
                } else if externalQueued >= capacity || !parked.isEmpty {
                    guard case .parked = action else { Issue.record("submit to a full queue: \(action)"); return }
                    parked.append(next)
                } else if !draining {
                    guard case .drain = action else { Issue.record("idle submit: \(action)"); return }
                    draining = true
                    handled.append(.submit(next))
                    sentInOrder.append(.submit(next))
                    replies.resume(next)
                } else {
                    guard case .queued = action else { Issue.record("submit: \(action)"); return }
                    queue.append(.submit(next))
                    externalQueued += 1
                    sentInOrder.append(.submit(next))
                }
            case 4:  // a parked sendAndWait is cancelled
                guard !parked.isEmpty else { continue }
                let id = parked.remove(at: rng.int(parked.count))
                guard let unparked = machine.unpark(id: UInt64(id)), unparked.id == UInt64(id) else {
                    Issue.record("unpark \(id) found nothing"); return
                }
                counted.cancelledWhileWaiting += 1
                replies.resume(id)
            case 5:  // the drainer finishes its batch
                guard draining, !stopped else { continue }
                var batch: [QueueItem<Int, Int>] = []
                var retired: Int?
                let action = machine.finishBatch(&batch, state: next, reduced: 0, droppedFromCancelledEffects: 0, releaseWhenEmpty: true, retired: &retired)
                if queue.isEmpty && parked.isEmpty {
                    switch action {
                    case .released, .releasedWaking: break
                    default: Issue.record("empty queue kept the role: \(action)"); return
                    }
                    draining = false
                } else {
                    guard case .drainMore = action else { Issue.record("a non-empty queue released the role: \(action)"); return }
                    var expected = queue
                    let moved = parked.prefix(capacity)
                    expected += moved.map { .submit($0) }
                    sentInOrder += moved.map { .submit($0) }
                    parked.removeFirst(moved.count)
                    queue = []
                    externalQueued = 0
                    let got = batch.map(Self.item)
                    if got != expected { Issue.record("batch \(got), expected \(expected)"); return }
                    handled += got
                    for case .submit(let id) in got { replies.resume(id) }
                }
            default:  // stop
                guard !stopped else { continue }
                stopped = true
                let action = machine.beginStop()
                let (discarded, parkedBack): ([QueueItem<Int, Int>], [ParkedSubmit<Int, Int>])
                switch action {
                case .tearDown(let d, let p), .drainerTearsDown(let d, let p): (discarded, parkedBack) = (d, p)
                case .alreadyStopping: Issue.record("first stop said already stopping"); return
                }
                if discarded.map(Self.item) != queue { Issue.record("stop discarded \(discarded.map(Self.item)), queued \(queue)"); return }
                if parkedBack.map({ Int($0.id) }) != parked { Issue.record("stop handed back parked \(parkedBack.map(\.id)), parked \(parked)"); return }
                counted.discarded += queue.count + parked.count
                for case .submit(let id) in queue { replies.resume(id) }
                for id in parked { replies.resume(id) }
                queue = []
                parked = []
                draining = true  // the stopping thread or the drainer holds the role from now on
            }
        }
        // Whatever is still queued or parked is handed back by a stop, so nothing leaks.
        if !stopped {
            switch machine.beginStop() {
            case .tearDown(let d, let p), .drainerTearsDown(let d, let p):
                for case .submit(let id) in d.map(Self.item) { replies.resume(id) }
                for parkedSubmit in p { replies.resume(Int(parkedSubmit.id)) }
            case .alreadyStopping: Issue.record("stop after stop")
            }
        }

        #expect(handled == Array(sentInOrder.prefix(handled.count)), "the drainer got items out of admission order")
        #expect(machine.statistics.eventsDroppedAfterStop == counted.afterStop)
        #expect(machine.statistics.eventsDroppedOverCapacity == counted.overCapacity)
        #expect(machine.statistics.eventsCancelledWhileWaiting == counted.cancelledWhileWaiting)
        if stopped { #expect(machine.statistics.eventsDiscardedAtStop == counted.discarded) }
        let resumed = replies.outcomes.current
        #expect(resumed.values.allSatisfy { $0 == 1 }, "a continuation was handed back more than once: \(resumed.filter { $0.value > 1 })")
        #expect(replies.parked.current.isEmpty, "a continuation was never handed back: \(replies.parked.current.keys.sorted())")
    }
}
