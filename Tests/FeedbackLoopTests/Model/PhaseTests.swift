@testable import FeedbackLoop
import Testing

/// The loop's life and its drain role (``Phase``), driven directly: each transition from each
/// phase (those that make no sense trap: ``InvalidTransitionTests``).
@Suite("Phase: a loop's life and its drain role")
struct PhaseTests {
    @Test func theFirstSenderTakesTheRoleAndLaterOnesQueue() {
        var phase = Phase.idle
        guard case .takeRole = phase.admit() else { Issue.record("an idle loop did not hand over the role"); return }
        #expect(phase == .draining)
        guard case .queue = phase.admit() else { Issue.record("a second sender took the role too"); return }
        #expect(phase == .draining)
        #expect(phase.drainGoesOn("test"))
        phase.release()
        #expect(phase == .idle)
    }

    @Test func stopFromIdleHandsTheCallerTheRole() {
        var phase = Phase.idle
        guard case .tearDown = phase.beginStop() else { Issue.record("stop of an idle loop did not hand over teardown"); return }
        #expect(phase == .stopping)
        guard case .alreadyStopping = phase.beginStop() else { Issue.record("stop began twice"); return }
    }

    @Test func stopDuringADrainLeavesTeardownToTheDrainer() {
        var phase = Phase.idle
        _ = phase.admit()
        guard case .drainerTearsDown = phase.beginStop() else { Issue.record("stop took the role from its holder"); return }
        #expect(!phase.drainGoesOn("test"), "the drainer went on after stop began")
        guard case .refuse = phase.admit() else { Issue.record("an item entered after stop began"); return }
    }

    @Test func teardownThenTheLastEffectStopsTheLoop() {
        var phase = Phase.idle
        _ = phase.beginStop()
        phase.tornDown()
        #expect(phase == .tornDown)
        guard case .refuse = phase.admit() else { Issue.record("an item entered a torn-down loop"); return }
        guard case .alreadyStopping = phase.beginStop() else { Issue.record("stop began again after teardown"); return }
        phase.effectsEnded()
        #expect(phase == .stopped)
        #expect(!phase.isRunning)
    }
}
