@testable import FeedbackLoop
import Testing

/// A loop gives back what a burst made it grow: its queue buffers and its registry of running
/// effects keep their capacity between batches (so that a steady flow allocates nothing), but
/// not the peak of a burst for the rest of the loop's life.
@Suite("Buffers: an idle loop does not keep a burst's peak")
struct BufferTests {
    static let burst = 10_000

    @Test(arguments: Backend.allCases)
    func queueBuffersShrinkOnceTheBurstIsDrained(backend: Backend) async throws {
        let loop = Loop(initial: 0, reduce: { (state: inout Int, event: Int) in state += event }, backend: backend)
        try await withDrainHeld(loop, by: 1, at: { $0 == 1 }) { release in
            // Queued behind the held drain: the shared queue grows to the whole burst.
            for _ in 0..<Self.burst { loop.send(1) }
            #expect(loop.engine.lock.withLock { $0.items.capacity } >= Self.burst)
            release.open()
            try await withDeadline("the burst to drain") { await loop.waitUntilIdle() }
        }
        #expect(loop.state == Self.burst + 1)
        let kept = LoopStateMachine<Int, Int>.keptQueueCapacity
        #expect(loop.engine.lock.withLock { $0.items.capacity } <= kept, "the shared queue kept the burst's peak")
        #expect(await loop.engine.spareCapacity() <= kept, "the drain's spare buffer kept the burst's peak")
        // And a steady flow afterwards still works.
        for _ in 0..<100 { loop.send(1) }
        try await withDeadline("the flow to drain") { await loop.waitUntilIdle() }
        #expect(loop.state == Self.burst + 101)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func theEffectRegistryShrinksOnceItsEffectsEnded(backend: Backend) async throws {
        let loop = Loop(
            initial: 0,
            reduce: { (state: inout Int, event: Int) in state += event },
            feedbacks: [
                .requests({ $0 == 1 ? Set(0..<Self.burst) : [] }) { _ in .callback { _ in .none } }
            ],
            backend: backend)
        loop.send(1)
        try await withDeadline("the effects to start") { await loop.engine.waitUntil { $0.effects.count == Self.burst } }
        #expect(loop.engine.lock.withLock { $0.effects.capacity } >= Self.burst)
        loop.send(1)
        try await withDeadline("the effects to end") { await loop.waitUntilIdle() }
        #expect(loop.statistics.effectsCancelled == Self.burst)
        #expect(
            loop.engine.lock.withLock { $0.effects.capacity } <= LoopStateMachine<Int, Int>.keptQueueCapacity,
            "the registry kept the table of \(Self.burst) effects")
        await loop.stop()
    }
}
