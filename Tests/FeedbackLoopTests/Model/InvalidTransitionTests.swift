@testable import FeedbackLoop
import Foundation
import Testing

// Not under ThreadSanitizer: a trap tests no concurrency, and there each child process is the
// sanitized test binary starting up, seconds apiece on two cores, while the suites beside them
// wait: durable checks have waited 30 s for an answer while the eleven ran. The plain test run
// covers every trap.
#if !TSAN
/// Every state machine under the loop's lock (``Phase``, ``LoopStateMachine`` and its
/// sub-machines) traps on a transition that makes no sense in its state, rather than going on
/// with a broken loop, and its message names the machine, the state and the transition. Each
/// test runs in a child process; serialized, so that these processes start one at a time rather
/// than all at once beside every other suite's tests.
@Suite("Invalid transitions trap, naming the machine, its state and the transition", .serialized)
struct InvalidTransitionTests {
    /// Runs `body`, an exit test, with its tasks on threads of their own: swift-testing reads a
    /// child process's standard error and its back channel with blocking reads in child tasks of
    /// the test, which on the cooperative pool (two threads on two cores) would block every suite
    /// beside these for as long as each child runs. Durable checks' 30 s waits timed out while
    /// the eleven ran.
    func offThePool<T>(_ body: () async -> T) async -> T {
        await withTaskExecutorPreference(ThreadPerJob.executor, operation: body)
    }

    @Test func releasingARoleNobodyHoldsTraps() async {
        let trap = await offThePool {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                var phase = Phase.idle
                phase.release()
            }
        }
        #expect(trap?.standardError.contains("Phase.release() in phase idle") == true, "\(trap?.standardError ?? "")")
    }

    @Test func tearingDownARunningLoopTraps() async {
        let trap = await offThePool {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                var phase = Phase.draining
                phase.tornDown()
            }
        }
        #expect(trap?.standardError.contains("Phase.tornDown() in phase draining") == true, "\(trap?.standardError ?? "")")
    }

    @Test func finishingABatchNobodyDrainsTraps() async {
        let trap = await offThePool {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                var machine = LoopStateMachine<Int, Int>(initial: 0, capacity: 8)
                var batch: [QueueItem<Int, Int>] = []
                var retired: Int?
                _ = machine.finishBatch(&batch, state: 0, reduced: 0, droppedFromCancelledEffects: 0, releaseWhenEmpty: true, retired: &retired)
            }
        }
        #expect(trap?.standardError.contains("Phase.finishBatch in phase idle") == true, "\(trap?.standardError ?? "")")
    }

    @Test func tearingDownTwiceTraps() async {
        let trap = await offThePool {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                var machine = LoopStateMachine<Int, Int>(initial: 0, capacity: 8)
                _ = machine.beginStop()
                _ = machine.tornDown(cancelled: 0, endedNow: [])
                _ = machine.tornDown(cancelled: 0, endedNow: [])
            }
        }
        #expect(trap?.standardError.contains("Phase.tornDown() in phase stopped") == true, "\(trap?.standardError ?? "")")
    }

    @Test func closingTwiceTraps() async {
        let trap = await offThePool {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                var intake = Intake<Int, Int>(capacity: 1)
                _ = intake.close()
                _ = intake.close()
            }
        }
        #expect(trap?.standardError.contains("Intake.close() in state closed") == true, "\(trap?.standardError ?? "")")
    }

    @Test func parkingInAClosedQueueTraps() async {
        let trap = await offThePool {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let reply = await LoopStateMachineTests.Replies().make(1)
                var intake = Intake<Int, Int>(capacity: 1)
                _ = intake.close()
                intake.park(ParkedSubmit(id: 1, event: 1, reply: reply, cause: nil))
            }
        }
        #expect(trap?.standardError.contains("Intake.park(_:) in state closed") == true, "\(trap?.standardError ?? "")")
    }

    @Test func anEndReportedTwiceBeforeRegistrationTraps() async {
        let trap = await offThePool {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                var effects = RunningEffects()
                _ = effects.workEnded(id: 1, keeping: 64)
                _ = effects.workEnded(id: 1, keeping: 64)
            }
        }
        #expect(trap?.standardError.contains("RunningEffects.workEnded(id:) for effect 1 in state ended-before-registration") == true, "\(trap?.standardError ?? "")")
    }

    @Test func waitingForAStopThatHasHappenedTraps() async {
        let trap = await offThePool {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let continuation = await suspendedTask()
                var waiting = Waiting()
                _ = waiting.releaseStopWaiters()
                waiting.addStopWaiter(StopWaiter(id: 1, except: nil, continuation: continuation))
            }
        }
        #expect(trap?.standardError.contains("Waiting.addStopWaiter(_:) in state released") == true, "\(trap?.standardError ?? "")")
    }

    @Test func lettingStopWaitersGoTwiceTraps() async {
        let trap = await offThePool {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                var waiting = Waiting()
                _ = waiting.releaseStopWaiters()
                _ = waiting.releaseStopWaiters()
            }
        }
        #expect(trap?.standardError.contains("Waiting.releaseStopWaiters() in state released") == true, "\(trap?.standardError ?? "")")
    }

    @Test func settingAsideAfterTheHandOverTraps() async {
        let trap = await offThePool {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                var observers = ObserversAtStop<Int>.collecting([])
                _ = observers.handOver()
                observers.setAside(ObserverEntry(id: 1, onState: { _ in }, onStop: nil))
            }
        }
        #expect(trap?.standardError.contains("ObserversAtStop.setAside(_:) in state handedOver") == true, "\(trap?.standardError ?? "")")
    }

    @Test func handingOverTwiceTraps() async {
        let trap = await offThePool {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                var observers = ObserversAtStop<Int>.collecting([])
                _ = observers.handOver()
                _ = observers.handOver()
            }
        }
        #expect(trap?.standardError.contains("ObserversAtStop.handOver() in state handedOver") == true, "\(trap?.standardError ?? "")")
    }
}

/// A task executor that runs every job on a new thread, for jobs that block (see
/// ``InvalidTransitionTests/offThePool(_:)``): a thread per job cannot deadlock however many of
/// them block at once.
final class ThreadPerJob: TaskExecutor {
    static let executor = ThreadPerJob()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        Thread.detachNewThread { job.runSynchronously(on: executor) }
    }
}
#endif
