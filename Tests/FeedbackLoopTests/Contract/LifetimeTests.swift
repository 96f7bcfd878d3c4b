import FeedbackLoop
import Testing

/// Effect lifetime at scale: long effect-driven chains, many loops, many in-flight effects.
@Suite("Effect lifetime at scale")
struct LifetimeTests {
    @Test(arguments: Backend.allCases)
    func aTenThousandStepChainOfRunEffectsNeverCancelsASuccessor(backend: Backend) async throws {
        // Each step's effect sends the event that moves the query on, which cancels the sender
        // (still running) and starts the next step. A successor cancelled by mistake would stall
        // the chain, and its event would be counted as dropped.
        let steps = Scale.of(10_000)
        let loop = Loop(
            initial: Counter.State(),
            reduce: Counter.reduce,
            feedbacks: [
                .skippingRepeated({ $0.count < steps ? $0.count : nil }) { _ in
                    .run { send in send(.increment) }
                },
            ],
            backend: backend)
        // Each step waits its turn on the pool behind every other test's work: the bound only
        // catches a stalled chain, which never completes.
        try await withDeadline("a \(steps)-step chain", limit: .seconds(600)) { await loop.waitUntilIdle() }
        #expect(loop.state.count == steps)
        let statistics = loop.statistics
        #expect(statistics.effectsStarted == steps)
        #expect(statistics.eventsDroppedFromCancelledEffects == 0)
        #expect(statistics.effectsFinished + statistics.effectsCancelled == steps)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func tenThousandLoopsCreatedAndStoppedLeaveNoEffectRunning(backend: Backend) async throws {
        let running = Locked(0)
        let started = CountdownLatch()
        let loops = Scale.of(10_000)
        for index in 0..<loops {
            let loop = Loop(
                initial: Counter.State(query: 1),
                reduce: Counter.reduce,
                feedbacks: [
                    .skippingRepeated({ $0.query }) { _ in
                        .run { _ in
                            running.increment()
                            defer { running.withLock { $0 -= 1 } }
                            started.increment()
                            await suspendUntilCancelled()
                        }
                    },
                ],
                backend: backend)
            // Each loop's effect really runs before the stop: an engine that never started
            // effects would fail here, not pass for having nothing to leak.
            try await withDeadline("loop \(index)'s effect to start") { await started.wait(for: index + 1) }
            await loop.stop()
        }
        #expect(running.current == 0)
        #expect(started.count == loops)
    }

    @Test(arguments: Backend.allCases)
    func stopWithTenThousandRequestsInFlightReturnsAfterEveryOneEnded(backend: Backend) async throws {
        let count = Scale.of(10_000)
        let started = CountdownLatch()
        let ended = Locked(0)
        let loop = Loop(
            initial: Counter.State(),
            reduce: Counter.reduce,
            feedbacks: [
                .requests({ $0.flag ? Set(0..<count) : [] }) { _ in
                    .run { _ in
                        defer { ended.increment() }
                        started.increment()
                        await suspendUntilCancelled()
                    }
                },
            ],
            backend: backend)
        loop.send(.setFlag(true))
        try await withDeadline("\(count) effects to start") { await started.wait(for: count) }
        try await withDeadline("stop") { await loop.stop() }
        #expect(ended.current == count)
        let statistics = loop.statistics
        #expect(statistics.effectsCancelled == count)
        #expect(statistics.effectsRunning == 0)
    }
}
