import FeedbackLoop
import Foundation
import Testing

/// Rule: a loop that always has work never keeps the threads it shares with other work.
///
/// `actor` and `stream` drain on the cooperative pool, one thread per CPU: a drain that never
/// gave way would stall every other task in the process — other loops, timers, a server's
/// requests — for as long as the loop stays busy. `callback` drains on the thread of the sender
/// that found it idle and shares no thread: its busy loops stay on their senders' threads.
@Suite("A busy loop leaves the pool to other tasks")
struct FairnessTests {
    /// Steps each busy loop takes at most. A drain gives way every 1,024 items, so a task waiting
    /// for the pool waits a turn of each busy loop per trip through the queue, however crowded
    /// the queue (the rest of the suite runs beside this test): ten trips cost a loop ~11,000
    /// steps, a twentieth of this. A drain that never gave way keeps its thread until its loop
    /// reaches this limit. Counting steps instead of timing keeps the test independent of the
    /// machine's load.
    static let steps = 200_000

    @Test(arguments: Backend.allCases)
    func otherTasksRunWhileEveryPoolThreadHasABusyLoop(backend: Backend) async throws {
        // One ping-pong per pool thread: every state asks for the next event, so the queue is
        // never empty until the loop reaches `steps` or the test has seen what it needs (`done`:
        // busy loops slow every other test running beside this one).
        let done = Locked(false)
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let kickers = Locked<[Int: ObjectIdentifier]>([:])
        let offKicker = Locked(0)
        let loops = (0..<cores).map { _ in
            Loop(
                initial: 0,
                reduce: { (state: inout Int, event: Int) in state = event },
                feedbacks: [.skippingRepeated({ $0 > 0 ? $0 : nil }) { count in
                    count < Self.steps && !done.current ? .send(count + 1) : .none
                }],
                backend: backend)
        }
        let busy = CountdownLatch()
        let watchers = loops.enumerated().map { index, loop in
            loop.observe { state in
                if state == 1_000 { busy.increment() }
                if state > 0, backend == .callback, kickers.current[index] != ObjectIdentifier(Thread.current) {
                    offKicker.increment()
                }
            }
        }
        // Kicked from threads of their own: on `callback` the kicking thread drains to the end.
        let kicked = Task {
            await onThreads(cores) { index in
                kickers.withLock { $0[index] = ObjectIdentifier(Thread.current) }
                loops[index].send(1)
            }
        }
        try await withDeadline("every loop busy") { await busy.wait(for: cores) }

        switch backend {
        case .actor, .stream:
            // Every pool thread has a busy loop: a plain task now needs the pool ten times.
            let stillBusy = await Task {
                for _ in 0..<10 { await Task.yield() }
                return loops.allSatisfy { $0.state < Self.steps }
            }.value
            done.withLock { $0 = true }
            #expect(stillBusy, "a task got the pool only once a busy loop had run to its end")
        case .callback:
            done.withLock { $0 = true }
            await kicked.value
            #expect(offKicker.current == 0, "a busy callback loop ran on another thread than its sender's")
        }
        await kicked.value
        for loop in loops { try await withDeadline("the loop's last step") { await loop.waitUntilIdle() } }
        for watcher in watchers { watcher.cancel() }
        for loop in loops { await loop.stop() }
    }
}
