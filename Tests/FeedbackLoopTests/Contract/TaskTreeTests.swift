import FeedbackLoop
import Testing

/// A task-local value the tests bind around the code that makes, feeds or runs a loop, the way a
/// server binds a tracing `ServiceContext` or a logger's metadata.
enum Trace {
    @TaskLocal static var value: String?
}

/// Rules: which task-local values a `.run` effect sees, and how a loop's tasks hang together.
///
/// - `stream` keeps the loop in one task tree: its effects are child tasks of the host, and see
///   what was bound around the host — the code that made the loop (``LoopHosting/ownTask``) or
///   the caller of `run()` (``LoopHosting/run``).
/// - `callback` and `actor` start each effect as an unstructured task from the drain under way:
///   it sees what was bound around the `send` that found the loop idle and began that drain (for
///   `callback` the sender drains in place; for `actor` its task wakes the actor). Which send that
///   is depends on timing when several race, so neither backend promises task-locals to effects.
@Suite("The loop's task tree: task-locals, hosting by run(), structured cancellation")
struct TaskTreeTests {
    /// One `.run` effect per query; each records the task-local value it saw, then ends.
    static func recordingLoop(
        _ backend: Backend, hosting: LoopHosting = .ownTask, seen: Locked<[Int: String]>, ended: CountdownLatch
    ) -> Loop<Counter.State, Counter.Event> {
        Loop(
            initial: Counter.State(query: 0),
            reduce: Counter.reduce,
            feedbacks: [
                .skippingRepeated({ $0.query }) { query in
                    .run { _ in
                        let value = Trace.value ?? "none"
                        seen.withLock { $0[query] = value }
                        ended.increment()
                    }
                },
            ],
            backend: backend,
            configuration: LoopConfiguration(hosting: hosting))
    }

    @Test(arguments: Backend.allCases)
    func effectsSeeTheTaskLocalsOfTheTaskThatRunsTheLoop(backend: Backend) async throws {
        let seen = Locked<[Int: String]>([:])
        let ended = CountdownLatch()
        let loop = Trace.$value.withValue("made the loop") { Self.recordingLoop(backend, seen: seen, ended: ended) }
        try await withDeadline("the initial state's effect") { await ended.wait(for: 1) }
        // Idle: the next send finds no drain under way and begins one.
        await loop.waitUntilIdle()
        Trace.$value.withValue("sent") { loop.send(.setQuery(1)) }
        try await withDeadline("the second effect") { await ended.wait(for: 2) }

        switch backend {
        case .stream:
            #expect(seen.current == [0: "made the loop", 1: "made the loop"])
        case .callback, .actor:
            #expect(seen.current == [0: "made the loop", 1: "sent"])
        }
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func aTaskLocalBoundAroundRunReachesEveryEffectOfAStreamLoopHostedByRun(backend: Backend) async throws {
        let seen = Locked<[Int: String]>([:])
        let ended = CountdownLatch()
        let loop = Self.recordingLoop(backend, hosting: .run, seen: seen, ended: ended)
        let runner = Task { await Trace.$value.withValue("ran the loop") { await loop.run() } }
        for query in 1...3 { loop.send(.setQuery(query)) }
        try await withDeadline("four effects") { await ended.wait(for: 4) }

        switch backend {
        case .stream:
            #expect(seen.current == [0: "ran the loop", 1: "ran the loop", 2: "ran the loop", 3: "ran the loop"])
        case .callback, .actor:
            // Made and fed outside any binding; `hosting` does not apply.
            #expect(seen.current == [0: "none", 1: "none", 2: "none", 3: "none"])
        }
        runner.cancel()
        try await withDeadline("run() to return") { await runner.value }
    }

    @Test(arguments: Backend.allCases)
    func eventsSentBeforeRunWaitForItsHost(backend: Backend) async throws {
        let loop = Loop(
            initial: Counter.State(), reduce: Counter.reduce, backend: backend,
            configuration: LoopConfiguration(hosting: .run))
        for _ in 0..<3 { loop.send(.increment) }
        if backend == .stream {
            // Nothing runs the state's owner until a host comes.
            #expect(loop.state.count == 0)
            #expect(loop.statistics.eventsReduced == 0)
        }
        let runner = Task { await loop.run() }
        try await withDeadline("the queued events") {
            for await state in loop.states where state.count == 3 { break }
        }
        runner.cancel()
        try await withDeadline("run() to return") { await runner.value }
        #expect(loop.state.count == 3)
    }

    @Test(arguments: Backend.allCases, [LoopHosting.ownTask, .run])
    func cancellingRunStopsTheLoopAndEndsEveryEffectBeforeItReturns(backend: Backend, hosting: LoopHosting) async throws {
        let started = CountdownLatch()
        let stillRunning = Locked(0)
        let loop = Loop(
            initial: Counter.State(),
            reduce: Counter.reduce,
            feedbacks: [
                .requests({ Set(0..<$0.count) }) { _ in
                    .run { _ in
                        stillRunning.increment()
                        defer { stillRunning.withLock { $0 -= 1 } }
                        started.increment()
                        await suspendUntilCancelled()
                    }
                },
            ],
            backend: backend,
            configuration: LoopConfiguration(hosting: hosting))
        let runner = Task { await loop.run() }
        for _ in 0..<10 { loop.send(.increment) }
        try await withDeadline("ten effects") { await started.wait(for: 10) }

        runner.cancel()
        try await withDeadline("run() to return") { await runner.value }
        #expect(stillRunning.current == 0, "run() returned while effects still ran")
        #expect(loop.statistics.effectsCancelled == 10)
        #expect(loop.statistics.effectsRunning == 0)
        loop.send(.increment)
        #expect(loop.statistics.eventsDroppedAfterStop == 1)
    }

    @Test(arguments: Backend.allCases)
    func aLoopNobodyRanStillStops(backend: Backend) async throws {
        let loop = Loop(
            initial: Counter.State(query: 1), reduce: Counter.reduce,
            feedbacks: [.skippingRepeated({ $0.query }) { _ in .run { _ in await suspendUntilCancelled() } }],
            backend: backend,
            configuration: LoopConfiguration(hosting: .run))
        loop.send(.increment)
        try await withDeadline("stop()") { await loop.stop() }
        // The initial state reached the feedback (rule 1) even though, on `stream`, no host ran
        // the loop before the stop: its effect started, and the stop cancelled it.
        #expect(loop.statistics.effectsStarted == 1)
        #expect(loop.statistics.effectsCancelled == 1)
        #expect(loop.statistics.effectsRunning == 0)
        try await withDeadline("a second stop()") { await loop.stop() }
        try await withDeadline("run() after the stop") { await loop.run() }
    }
}
