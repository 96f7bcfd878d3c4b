import FeedbackLoop
import Testing

/// A stopped loop lets go of its feedbacks and whatever their closures captured (a view model, a
/// client), even while someone still holds the loop — and, as every release that can run user
/// code, after the loop's lock (rule 9).
@Suite("Stop releases the feedbacks")
struct FeedbackReleaseTests {
    @Test(arguments: Backend.allCases, [false, true])
    func stopReleasesEveryFeedbackAndWhatItCapturedAfterTheLock(backend: Backend, owning: Bool) async throws {
        let box = LoopBox()
        let loop = Loop(
            initial: Wired.State(query: 1),
            reduce: Wired.reduce,
            feedbacks: [
                .skippingRepeated({ [wire = box.tripwire()] state in withExtendedLifetime(wire) { state.query } }) { _ in .none },
                .skippingRepeated({ [wire = box.tripwire()] state in withExtendedLifetime(wire) { state.query } }) { _ in .none },
                .skippingRepeated({ [wire = box.tripwire()] state in withExtendedLifetime(wire) { state.query } }) { _ in .none },
            ],
            backend: backend)
        box.hold(loop, owning: owning)
        try await withDeadline("stop") { await loop.stop() }
        // `loop` is still held here: only the stop can have released the feedbacks.
        try await withDeadline("every feedback's captures released") { await box.touches.wait(for: 3) }
        withExtendedLifetime(loop) {}
    }
}
