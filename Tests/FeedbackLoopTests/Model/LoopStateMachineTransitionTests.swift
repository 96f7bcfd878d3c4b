@testable import FeedbackLoop
import Testing

/// The composed state machine (``LoopStateMachine``) driven directly through a loop's life, as
/// swift-nio tests its state machines: each step a transition, each action checked (the
/// transitions that make no sense in a phase trap: ``InvalidTransitionTests``).
@Suite("LoopStateMachine: transitions through a loop's life")
struct LoopStateMachineTransitionTests {
    typealias Machine = LoopStateMachine<Int, Int>

    static func effect(_ id: UInt64) -> RunningEffect {
        RunningEffect(handle: EffectHandle(id: id, feedback: 0, isTask: true), stopper: .cancellation(.none))
    }

    @Test func aStopWaiterInsideTheLastEffectGoesWhenOnlyItsEffectIsLeft() async {
        var machine = Machine(initial: 0, capacity: 8)
        _ = machine.register(Self.effect(1))
        _ = machine.register(Self.effect(2))
        guard case .tearDown = machine.beginStop() else { Issue.record("stop of an idle loop did not hand over teardown"); return }
        guard case .wait = machine.waitForStop(StopWaiter(id: 10, except: 1, continuation: await suspendedTask())) else {
            Issue.record("a stop waiter inside effect 1 went on while effect 2 ran"); return
        }
        guard case .wait = machine.waitForStop(StopWaiter(id: 11, except: nil, continuation: await suspendedTask())) else {
            Issue.record("a stop waiter went on while effects ran"); return
        }
        var followups = [machine.tornDown(cancelled: 2, endedNow: [])]
        #expect(followups[0].stopped.isEmpty)
        #expect(machine.phase == .tornDown)
        followups.append(machine.taskReturned(2, outcome: nil))
        #expect(followups[1].stopped.map(\.id) == [10], "only effect 1 is left: its own stop waiter goes")
        let inside = await suspendedTask()
        if case .resume = machine.waitForStop(StopWaiter(id: 12, except: 1, continuation: inside)) {
            inside.resume()
        } else {
            Issue.record("a new stop waiter inside the last effect waited for itself")
        }
        followups.append(machine.taskReturned(1, outcome: nil))
        #expect(followups[2].stopped.map(\.id) == [11])
        #expect(machine.phase == .stopped)
        #expect(machine.statistics.effectsCancelled == 2)
        #expect(machine.statistics.effectsRunning == 0)
        for var followup in followups { followup.perform() }
    }

    @Test func observersAStopGotToFirstGetTheFinalStateAfterTeardown() {
        let seen = Locked<[String]>([])
        func observer(_ name: String) -> (@Sendable (Int) -> Void, @Sendable () -> Void) {
            ({ state in seen.withLock { $0.append("\(name): \(state)") } }, { seen.withLock { $0.append("\(name) stopped") } })
        }
        var machine = Machine(initial: 0, capacity: 8)
        guard case .drain = machine.enqueue(.start, external: false) else { Issue.record("the start did not take the role"); return }
        let queued = observer("queued")
        guard case .enqueued(_, .queued) = machine.addObserver(onState: queued.0, onStop: queued.1) else {
            Issue.record("an observer did not queue behind the drain"); return
        }
        guard case .drainerTearsDown(let discarded, _) = machine.beginStop() else { Issue.record("stop took the role from its holder"); return }
        #expect(discarded.count == 1)
        let late = observer("late")
        guard case .awaitingTeardown = machine.addObserver(onState: late.0, onStop: late.1) else {
            Issue.record("an observer joining during the stop was not set aside"); return
        }
        var batch: [QueueItem<Int, Int>] = []
        var retired: Int?
        let end = machine.finishBatch(&batch, state: 42, reduced: 1, droppedFromCancelledEffects: 0, releaseWhenEmpty: true, retired: &retired)
        guard case .tearDown = end else { Issue.record("the drainer went on after stop: \(end)"); return }
        var followup = machine.tornDown(cancelled: 0, endedNow: [])
        #expect(machine.phase == .stopped, "a loop with no effects is stopped once torn down")
        followup.perform()
        #expect(seen.current == ["queued: 42", "queued stopped", "late: 42", "late stopped"])
        guard case .stopped(42) = machine.addObserver(onState: { _ in }, onStop: nil) else {
            Issue.record("an observer of a stopped loop did not get its final state"); return
        }
    }

    @Test func aCancelledEffectsEventsAreDroppedAndCounted() {
        var machine = Machine(initial: 0, capacity: 8)
        let handle = EffectHandle(id: 1, feedback: 0, isTask: false)
        _ = handle.markCancelled()
        guard case .dropped(.fromCancelledEffect, firstWarning: false) = machine.send(5, from: handle) else {
            Issue.record("a cancelled effect's event was not dropped"); return
        }
        #expect(machine.statistics.eventsDroppedFromCancelledEffects == 1)
        #expect(machine.phase == .idle, "a dropped event took the drain role")
    }

    @Test func anIdleWaiterGoesWhenTheDrainReleasesTheRole() async {
        var machine = Machine(initial: 0, capacity: 8)
        let first = await suspendedTask()
        if machine.waitForIdle(first) {
            first.resume()  // as the engine does, after the lock
        } else {
            Issue.record("an idle loop made its caller wait")
        }
        guard case .reduce = machine.send(1, from: nil) else { Issue.record("an idle loop did not hand over the role"); return }
        let waiter = await suspendedTask()
        let idleAtOnce = machine.waitForIdle(waiter)
        #expect(!idleAtOnce, "a draining loop said it was idle")
        if idleAtOnce { waiter.resume() }
        var retired: Int?
        guard case .releasedWaking(let ready) = machine.finishInPlace(state: 1, reduced: 1, droppedFromCancelledEffects: 0, retired: &retired) else {
            Issue.record("the release did not let the idle waiter go"); return
        }
        #expect(ready.count == 1)
        for waiter in ready { waiter.resume() }
        #expect(machine.published == 1)
        #expect(machine.isIdle)
    }
}
