import FeedbackLoop
import Testing

/// Rule 6: `stop()` cancels every running effect exactly once, reduces nothing afterwards,
/// finishes `states`, and is idempotent; `send` after stop is reported, never a crash; releasing
/// the last reference to a running loop stops it and frees its effects.
@Suite("6. Stop cancels everything once and reduces nothing after")
struct StopTests {
    /// A system with `count` never-ending effects of each kind, counting starts, cancellations
    /// and task exits.
    final class Effects: Sendable {
        let started = CountdownLatch()
        let callbackCancellations = Locked<[Int: Int]>([:])
        let taskCancellations = Locked<[Int: Int]>([:])
        let tasksEnded = CountdownLatch()

        func feedbacks(count: Int) -> [Feedback<Counter.State, Counter.Event>] {
            [
                .requests({ _ in Set(0..<count) }) { id in
                    .callback { _ in
                        self.started.increment()
                        return Cancellation { self.callbackCancellations.withLock { $0[id, default: 0] += 1 } }
                    }
                },
                .requests({ _ in Set(0..<count) }) { id in
                    .run { _ in
                        defer { self.tasksEnded.increment() }
                        self.started.increment()
                        await withTaskCancellationHandler {
                            await suspendUntilCancelled()
                        } onCancel: {
                            self.taskCancellations.withLock { $0[id, default: 0] += 1 }
                        }
                    }
                },
            ]
        }
    }

    @Test(arguments: Backend.allCases)
    func stopCancelsEveryEffectExactlyOnceAndWaitsForThemToEnd(backend: Backend) async throws {
        let effects = Effects()
        let loop = Loop(initial: Counter.State(), reduce: Counter.reduce, feedbacks: effects.feedbacks(count: 50), backend: backend)
        try await withDeadline("100 effects to start") { await effects.started.wait(for: 100) }

        try await withDeadline("stop") { await loop.stop() }

        #expect(effects.callbackCancellations.current == Dictionary(uniqueKeysWithValues: (0..<50).map { ($0, 1) }))
        #expect(effects.taskCancellations.current == Dictionary(uniqueKeysWithValues: (0..<50).map { ($0, 1) }))
        #expect(effects.tasksEnded.count == 50, "stop returned before every task ended")
        let statistics = loop.statistics
        #expect(statistics.effectsStarted == 100)
        #expect(statistics.effectsCancelled == 100)
        #expect(statistics.effectsRunning == 0)
    }

    @Test(arguments: Backend.allCases)
    func nothingIsReducedAfterStopAndLateSendsAreCounted(backend: Backend) async throws {
        let loop = Loop(initial: Counter.State(), reduce: Counter.reduce, backend: backend)
        loop.send(.increment)
        await loop.waitUntilIdle()
        await loop.stop()
        loop.send(.increment)
        loop.send(.increment)
        await #expect(throws: LoopError.stopped) { try await loop.sendAndWait(.increment) }
        #expect(loop.state.count == 1)
        #expect(loop.statistics.eventsReduced == 1)
        // Two sends and the refused sendAndWait: every refusal is counted.
        #expect(loop.statistics.eventsDroppedAfterStop == 3)
    }

    @Test(arguments: Backend.allCases)
    func eventsStillQueuedWhenStopBeginsAreDiscardedAndCounted(backend: Backend) async throws {
        let loop = Loop(initial: Counter.State(), reduce: Counter.reduce, backend: backend)
        try await withDrainHeld(loop, by: .increment, at: { $0.count == 1 }) { release in
            for _ in 0..<10 { loop.send(.increment) }
            let stopped = Task { await loop.stop() }
            try await waitUntil("stop to begin") { loop.statistics.eventsDiscardedAtStop == 10 }
            release.open()
            try await withDeadline("stop") { await stopped.value }
        }

        let statistics = loop.statistics
        #expect(statistics.eventsReduced == 1)
        #expect(statistics.eventsDiscardedAtStop == 10)
        #expect(loop.state.count == 1)
    }

    @Test(arguments: Backend.allCases)
    func stopFinishesStatesAndIsIdempotent(backend: Backend) async throws {
        let effects = Effects()
        let loop = Loop(initial: Counter.State(), reduce: Counter.reduce, feedbacks: effects.feedbacks(count: 3), backend: backend)
        let states = loop.states
        let reader = Task { var count = 0; for await _ in states { count += 1 }; return count }
        try await withDeadline("effects to start") { await effects.started.wait(for: 6) }

        async let first: Void = loop.stop()
        async let second: Void = loop.stop()
        _ = await (first, second)
        await loop.stop()

        let delivered = try await withDeadline("states to finish") { await reader.value }
        #expect(delivered >= 1)
        #expect(effects.callbackCancellations.current.values.allSatisfy { $0 == 1 })
        #expect(effects.taskCancellations.current.values.allSatisfy { $0 == 1 })
        #expect(loop.statistics.effectsCancelled == 6)

        var afterStop: [Counter.State] = []
        for await state in loop.states { afterStop.append(state) }
        #expect(afterStop == [loop.state], "a stopped loop's states give the final state and finish")
    }

    @Test(arguments: Backend.allCases)
    func releasingTheLastReferenceStopsTheLoopAndFreesItsEffects(backend: Backend) async throws {
        let effects = Effects()
        weak var weakLoop: Loop<Counter.State, Counter.Event>?
        do {
            let loop = Loop(initial: Counter.State(), reduce: Counter.reduce, feedbacks: effects.feedbacks(count: 5), backend: backend)
            weakLoop = loop
            try await withDeadline("effects to start") { await effects.started.wait(for: 10) }
        }
        #expect(weakLoop == nil)
        try await withDeadline("the released loop's tasks to end") { await effects.tasksEnded.wait(for: 5) }
        #expect(effects.callbackCancellations.current.count == 5)
        #expect(effects.taskCancellations.current.values.allSatisfy { $0 == 1 })
    }
}
