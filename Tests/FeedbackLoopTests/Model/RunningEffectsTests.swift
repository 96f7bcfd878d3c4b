@testable import FeedbackLoop
import Testing

/// The running effects' sub-machine (``RunningEffects``), driven directly: an effect whose work
/// ends before it is registered is never kept (an end reported twice traps:
/// ``InvalidTransitionTests``).
@Suite("RunningEffects: registration, and work that ends before it")
struct RunningEffectsTests {
    static func entry(_ id: UInt64) -> RunningEffect {
        RunningEffect(handle: EffectHandle(id: id, feedback: 0, isTask: true), stopper: .cancellation(.none))
    }

    @Test func anEffectWhoseWorkEndedFirstIsNotKept() {
        var effects = RunningEffects()
        let ended = effects.workEnded(id: 1, keeping: 64)
        let unkept = effects.register(Self.entry(1))
        #expect(ended == nil)
        #expect(unkept?.handle.id == 1, "the registration of an ended effect was kept")
        #expect(effects.isEmpty)
        #expect(effects.endedBeforeRegistration.isEmpty, "the early end was remembered after its registration")
    }

    @Test func aRegisteredEffectLeavesWhenItsWorkEnds() {
        var effects = RunningEffects()
        let kept = [effects.register(Self.entry(1)), effects.register(Self.entry(2))]
        #expect(kept.allSatisfy { $0 == nil })
        #expect(effects.onlyOne == nil)
        let ended = effects.workEnded(id: 1, keeping: 64)
        #expect(ended?.handle.id == 1)
        #expect(effects.onlyOne == 2)
        #expect(effects.countRunning() == 1)
        let removed = effects.remove(2, keeping: 64)
        #expect(removed?.handle.id == 2)
        #expect(effects.isEmpty)
        #expect(effects.onlyOne == nil)
    }
}
