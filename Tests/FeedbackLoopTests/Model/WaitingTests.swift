@testable import FeedbackLoop
import Testing

/// The waiters' sub-machine (``Waiting``), driven directly with real continuations: who is let go
/// at progress, at idle and at stop (a wait for a stop that has happened traps:
/// ``InvalidTransitionTests``).
@Suite("Waiting: idle, progress and stop waiters")
struct WaitingTests {
    @Test func progressLetsProgressWaitersGoAndIdleLetsEveryoneGo() async {
        var waiting = Waiting()
        #expect(!waiting.hasWaiters)
        waiting.add(Waiter(await suspendedTask(), untilIdle: true))
        waiting.add(Waiter(await suspendedTask(), untilIdle: false))
        waiting.add(Waiter(await suspendedTask(), untilIdle: true))
        let progressed = waiting.takeReady(idle: false)
        #expect(progressed.count == 1, "progress let \(progressed.count) waiters go, not the one waiting for progress")
        #expect(waiting.waiters.allSatisfy { $0.untilIdle })
        let idle = waiting.takeReady(idle: true)
        #expect(idle.count == 2)
        #expect(!waiting.hasWaiters)
        for waiter in progressed + idle { waiter.resume() }
    }

    @Test func onlyTheStopWaitersInsideTheLastEffectGoBeforeTheStop() async {
        var waiting = Waiting()
        waiting.addStopWaiter(StopWaiter(id: 1, except: 9, continuation: await suspendedTask()))
        waiting.addStopWaiter(StopWaiter(id: 2, except: nil, continuation: await suspendedTask()))
        waiting.addStopWaiter(StopWaiter(id: 3, except: 8, continuation: await suspendedTask()))
        let inside = waiting.releaseStopWaiters(runningIn: 9)
        let insideAgain = waiting.releaseStopWaiters(runningIn: 9)
        #expect(inside.map(\.id) == [1])
        #expect(insideAgain.isEmpty)
        let gaveUp = waiting.cancelStopWait(id: 3)
        let gaveUpAgain = waiting.cancelStopWait(id: 3)
        #expect(gaveUp?.id == 3)
        #expect(gaveUpAgain == nil)
        let rest = waiting.releaseStopWaiters()
        let gaveUpAfterStop = waiting.cancelStopWait(id: 2)
        #expect(rest.map(\.id) == [2])
        #expect(gaveUpAfterStop == nil, "a waiter let go at stop could still give up")
        for waiter in inside + rest + [gaveUp].compactMap({ $0 }) { waiter.continuation.resume() }
    }
}
