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

    /// A `states` reader or an observer whose joining was still queued when stop discarded the
    /// queue gets the final state and its end, like one that joined earlier or later.
    @Test(arguments: Backend.allCases)
    func observersStillJoiningWhenStopDiscardsTheQueueGetTheFinalStateAndEnd(backend: Backend) async throws {
        let loop = Loop(initial: Counter.State(), reduce: Counter.reduce, backend: backend)
        let observed = Locked<[Counter.State]>([])
        let (states, observation) = try await withDrainHeld(loop, by: .increment, at: { $0.count == 1 }) { release in
            loop.send(.increment)
            let states = loop.states  // joins through the queue, behind the event
            let observation = loop.observe { state in observed.withLock { $0.append(state) } }
            let stopped = Task { await loop.stop() }
            try await waitUntil("stop to begin") { loop.statistics.eventsDiscardedAtStop == 1 }
            release.open()
            try await withDeadline("stop") { await stopped.value }
            return (states, observation)
        }
        let read = try await withDeadline("the states reader to end") {
            var read: [Counter.State] = []
            for await state in states { read.append(state) }
            return read
        }
        #expect(read == [loop.state], "the reader gets the final state, then its end")
        #expect(observed.current == [loop.state])
        observation.cancel()
    }

    /// The same when the joining had already left the queue for the drain's batch as stop began:
    /// the drain discards the rest of its batch.
    @Test(arguments: Backend.allCases)
    func observersJoiningInTheBatchAStopInterruptsGetTheFinalStateAndEnd(backend: Backend) async throws {
        let loop = Loop(initial: Counter.State(), reduce: Counter.reduce, backend: backend)
        let states = try await withBlockingTurn {
            let first = DispatchGate(), second = DispatchGate()
            let heldFirst = Gate(), heldSecond = Gate()
            let holder = loop.observe { state in
                if state.count == 1 { heldFirst.open(); first.wait() }
                if state.count == 2 { heldSecond.open(); second.wait() }
            }
            defer {
                first.open()
                second.open()
                holder.cancel()
            }
            Task { await onThreads(1) { _ in loop.send(.increment) } }
            try await withDeadline("the drain to be held") { await heldFirst.wait() }
            // One batch: the event that holds the drain again, the reader joining, one more event.
            loop.send(.increment)
            let states = loop.states
            loop.send(.increment)
            first.open()
            try await withDeadline("the drain to be held in the batch") { await heldSecond.wait() }
            let stopped = Task { await loop.stop() }
            try await waitUntil("stop to begin") { loop.stopHasBegun }
            second.open()
            try await withDeadline("stop") { await stopped.value }
            return states
        }
        let read = try await withDeadline("the states reader to end") {
            var read: [Counter.State] = []
            for await state in states { read.append(state) }
            return read
        }
        #expect(read == [loop.state], "the reader gets the final state, then its end")
        #expect(loop.state.count == 2)
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
