import Dispatch
import FeedbackLoop
import Foundation
import Testing

/// Rule: a loop that always has work never keeps the threads it shares with other work. The
/// actor backend drains on the cooperative pool, one thread per core: a drain that never gave
/// way would stall every other task in the process — other loops, timers, a server's requests —
/// for as long as the loop stays busy.
@Suite("A busy loop leaves the pool to other tasks")
struct FairnessTests {
    @Test(arguments: Backend.allCases)
    func otherTasksRunWhileEveryPoolThreadHasABusyLoop(backend: Backend) async throws {
        // One endless ping-pong per pool thread: every state asks for the next event, so the
        // queue is never empty. `cut` ends them: the test sets it once the probe has run. A thread
        // of its own (neither the pool nor Dispatch's workers, which a starved pool may share)
        // waits for that at most 20 s, then cuts them itself, so that a starved pool fails the
        // test instead of hanging it.
        let cut = Locked(false)
        let finished = DispatchSemaphore(value: 0)
        let guardThread = Thread {
            if finished.wait(timeout: .now() + 20) == .timedOut { cut.withLock { $0 = true } }
        }
        guardThread.start()
        defer { finished.signal() }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let loops = (0..<cores).map { _ in
            Loop(
                initial: 0,
                reduce: { (state: inout Int, event: Int) in state = event },
                feedbacks: [.skippingRepeated({ $0 > 0 ? $0 : nil }) { count in cut.current ? .none : .send(count + 1) }],
                backend: backend)
        }
        // Kicked from threads of their own: on `callback` the kicking thread drains until `cut`.
        let kicked = Task { await onThreads(cores) { index in loops[index].send(1) } }
        let busy = CountdownLatch()
        let watchers = loops.map { loop in loop.observe { state in if state == 1_000 { busy.increment() } } }
        await busy.wait(for: cores)

        // Every loop is busy: a plain task now needs the pool ten times.
        let ranWhileBusy = await Task {
            for _ in 0..<10 { await Task.yield() }
            return !cut.current
        }.value
        cut.withLock { $0 = true }
        await kicked.value
        for watcher in watchers { watcher.cancel() }
        for loop in loops { await loop.stop() }
        #expect(ranWhileBusy, "a task waited until the busy loops were cut off after 20 s")
    }
}
