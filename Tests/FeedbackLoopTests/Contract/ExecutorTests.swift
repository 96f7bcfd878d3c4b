import FeedbackLoop
import Testing

/// Rule: a loop given an executor (`LoopConfiguration.executor`) runs its reducer, feedbacks,
/// observers and the synchronous start of its `.callback` effects isolated to that executor —
/// on the backend that runs the state's owner on an executor (``Backend/actor``). ``Backend/callback``
/// runs where the drain role is taken and ``Backend/stream`` in its host task; both ignore the
/// setting and keep every other rule.
@Suite("The user's executor")
struct ExecutorTests {
    /// Whether `backend` honours `LoopConfiguration.executor`.
    static func honoursExecutor(_ backend: Backend) -> Bool {
        switch backend {
        case .actor: true
        case .callback, .stream: false
        }
    }

    @Test(arguments: Backend.allCases)
    func everyCallOfTheMachineRunsOnTheGivenExecutor(backend: Backend) async throws {
        let executor = QueueExecutor()
        let offExecutor = Locked<[String]>([])
        @Sendable func check(_ what: String) {
            if !executor.isCurrent { offExecutor.append(what) }
        }
        let loop = Loop(
            initial: Counter.State(),
            reduce: { state, event in
                check("reducer")
                Counter.reduce(&state, event)
            },
            feedbacks: [
                .skippingRepeated({ state -> Int? in
                    check("query")
                    return state.query
                }) { query in
                    .callback { send in
                        check("callback effect start")
                        send.finish(sending: .record(query))
                        return .none
                    }
                },
                .skippingRepeated({ $0.count / 1_000 }) { thousand in .send(.setQuery(thousand)) },
            ],
            backend: backend,
            configuration: LoopConfiguration(executor: executor))
        let observation = loop.observe { _ in check("observer") }

        await onThreads(4) { _ in
            for _ in 0..<1_000 { loop.send(.increment) }
        }
        try await withDeadline("the loop settles") { await loop.waitUntilIdle() }

        #expect(loop.state.count == 4_000)
        #expect(loop.state.history == [0, 1, 2, 3, 4])
        if Self.honoursExecutor(backend) {
            #expect(offExecutor.current.isEmpty, "ran off the executor: \(Set(offExecutor.current))")
            #expect(executor.jobsRun > 0)
        } else {
            #expect(executor.jobsRun == 0)
        }
        observation.cancel()
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func teardownRunsOnTheGivenExecutor(backend: Backend) async throws {
        let executor = QueueExecutor()
        let stoppedOn = Locked<[Bool]>([])
        let loop = Loop(
            initial: Counter.State(query: 1),
            reduce: Counter.reduce,
            feedbacks: [
                .skippingRepeated({ $0.query }) { _ in
                    .callback { _ in Cancellation { stoppedOn.append(executor.isCurrent) } }
                },
            ],
            backend: backend,
            configuration: LoopConfiguration(executor: executor))
        try await withDeadline("the effect starts, then the loop stops") {
            await loop.barrier()
            await loop.stop()
        }
        #expect(loop.statistics.effectsCancelled == 1)
        #expect(stoppedOn.current.count == 1)
        if Self.honoursExecutor(backend) {
            #expect(stoppedOn.current == [true])
        }
    }
}
