import FeedbackLoop
import Foundation
import Testing

/// Rules of the shared workers that run every `actor` loop without an executor of its own (one
/// thread per CPU and one ready queue), checked on every backend: what holds for `actor` there
/// holds on the others by their own means.
///
/// - An idle loop on `actor` is woken without a task: its drain runs on a worker, not in a task
///   made per wake-up (`callback` drains in the sender's context, `stream` in its host task).
/// - A loop that always has work gives way to the other loops every turn: it cannot keep the
///   workers from a loop that receives one event.
/// - What a drain releases last (the loop's engine, its state, a deinit of the user's) is released
///   outside the scheduler's lock: a deinit that sends to another loop does not deadlock.
@Suite("The actor backend's shared workers")
struct SharedWorkersTests {
    @Test(arguments: Backend.allCases)
    func anIdleLoopIsWokenWithoutATaskOnActor(backend: Backend) async throws {
        let inTask = Locked<[Bool]>([])
        let loop = Loop(
            initial: 0,
            reduce: { (state: inout Int, event: Int) in
                state += event
                inTask.append(withUnsafeCurrentTask { $0 != nil })
            },
            backend: backend)
        for _ in 0..<3 {
            await loop.waitUntilIdle()
            loop.send(1)
        }
        try await withDeadline("three events reduced") { await loop.waitUntilIdle() }
        #expect(loop.state == 3)
        switch backend {
        case .actor:
            #expect(inTask.current == [false, false, false], "a wake-up ran its drain in a task")
        case .callback, .stream:
            // In place in the sender's task, or in the host task.
            #expect(inTask.current == [true, true, true])
        }
        await loop.stop()
    }

    /// Steps each busy loop takes at most; a loop that kept its worker would reach it before the
    /// quiet loop ran (see ``FairnessTests/steps``).
    static let steps = 200_000

    @Test(arguments: Backend.allCases)
    func aBusyLoopGivesWayToAnotherLoopEveryTurn(backend: Backend) async throws {
        // One busy loop per CPU, the workers' number: each would keep a worker to itself.
        let done = Locked(false)
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let busyLoops = (0..<cores).map { _ in
            Loop(
                initial: 0,
                reduce: { (state: inout Int, event: Int) in state = event },
                feedbacks: [.skippingRepeated({ $0 > 0 ? $0 : nil }) { count in
                    count < Self.steps && !done.current ? .send(count + 1) : .none
                }],
                backend: backend)
        }
        let busy = CountdownLatch()
        let watchers = busyLoops.map { loop in loop.observe { state in if state == 1_000 { busy.increment() } } }
        // Kicked from threads of their own: on `callback` the kicking thread drains to the end.
        let kicked = Task { await onThreads(cores) { index in busyLoops[index].send(1) } }
        try await withDeadline("every loop busy") { await busy.wait(for: cores) }

        let quiet = Loop(initial: 0, reduce: { (state: inout Int, event: Int) in state += event }, backend: backend)
        let reduced = Gate()
        let watcher = quiet.observe { state in if state == 1 { reduced.open() } }
        quiet.send(1)
        try await withDeadline("the quiet loop's event") { await reduced.wait() }
        let stillBusy = busyLoops.allSatisfy { $0.state < Self.steps }
        done.withLock { $0 = true }
        #expect(stillBusy, "the quiet loop ran only once a busy loop had run to its end")

        await kicked.value
        for loop in busyLoops { try await withDeadline("the loop's last step") { await loop.waitUntilIdle() } }
        for watcher in watchers + [watcher] { watcher.cancel() }
        for loop in busyLoops + [quiet] { await loop.stop() }
    }

    /// Sends into another loop when the last reference to it goes.
    final class SendsWhenReleased: Sendable {
        let target: Loop<Int, Int>

        init(target: Loop<Int, Int>) { self.target = target }

        deinit { target.send(1) }
    }

    @Test(arguments: Backend.allCases)
    func aDeinitThatSendsToAnotherLoopRunsOutsideTheSchedulersLock(backend: Backend) async throws {
        let target = Loop(initial: 0, reduce: { (state: inout Int, event: Int) in state += event }, backend: backend)
        let reduced = Gate()
        let watcher = target.observe { state in if state == 1 { reduced.open() } }
        do {
            // Its state holds the sender; once it is released, the teardown's turn on a worker
            // holds the last reference to its engine, and with it the state.
            let holder = Loop(
                initial: SendsWhenReleased(target: target),
                reduce: { (_: inout SendsWhenReleased, _: Int) in },
                backend: backend)
            await holder.waitUntilIdle()
        }
        try await withDeadline("the event sent by the deinit") { await reduced.wait() }
        #expect(target.state == 1)
        watcher.cancel()
        await target.stop()
    }
}
