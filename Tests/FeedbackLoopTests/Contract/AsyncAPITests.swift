@testable import FeedbackLoop
import Testing

/// What async callers rely on: `sendAndWait`, `waitUntilIdle`, `run`, and the `states`
/// buffering policies.
@Suite("Async API")
struct AsyncAPITests {
    @Test(arguments: Backend.allCases)
    func sendAndWaitReturnsTheStateRightAfterItsEvent(backend: Backend) async throws {
        let loop = Loop(
            initial: Counter.State(),
            reduce: Counter.reduce,
            feedbacks: [.skippingRepeated({ $0.query }) { .send(.add($0)) }],
            backend: backend)
        let state = try await loop.sendAndWait(.setQuery(5))
        #expect(state.query == 5)
        #expect(state.count == 0, "the effect's event comes after")
        await loop.waitUntilIdle()
        #expect(loop.state.count == 5)

        async let a = loop.sendAndWait(.increment)
        async let b = loop.sendAndWait(.increment)
        let counts = try await [a.count, b.count].sorted()
        #expect(counts == [6, 7], "each caller gets the state after its own event")
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func afterSendAndWaitTheLoopsStateAndStatisticsIncludeTheEvent(backend: Backend) async throws {
        let loop = Loop(initial: Counter.State(), reduce: Counter.reduce, backend: backend)
        for expected in 1...200 {
            let state = try await loop.sendAndWait(.increment)
            #expect(state.count == expected)
            #expect(loop.state.count >= expected)
            #expect(loop.statistics.eventsReduced >= expected)
        }
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func waitUntilIdleWaitsForQueuedEventsAndRunningEffects(backend: Backend) async throws {
        let release = Gate()
        let loop = Loop(
            initial: Counter.State(),
            reduce: Counter.reduce,
            feedbacks: [
                .skippingRepeated({ $0.query }) { query in
                    .run { send in
                        await release.wait()
                        send(.add(query))
                    }
                },
            ],
            backend: backend)
        loop.send(.setQuery(7))
        let idle = Task {
            await loop.waitUntilIdle()
            return loop.state.count
        }
        try await loop.sendAndWait(.increment)
        release.open()
        let count = try await withDeadline("idle") { await idle.value }
        #expect(count == 8, "idle only after the effect finished and its event was reduced")
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func cancellingTheTaskThatRunsTheLoopStopsItAndEveryEffect(backend: Backend) async throws {
        let started = CountdownLatch()
        let ended = CountdownLatch()
        let loop = Loop(
            initial: Counter.State(),
            reduce: Counter.reduce,
            feedbacks: [
                .requests({ _ in Set(0..<20) }) { _ in
                    .run { _ in
                        defer { ended.increment() }
                        started.increment()
                        await suspendUntilCancelled()
                    }
                },
            ],
            backend: backend)
        let service = Task { await loop.run() }
        try await withDeadline("effects to start") { await started.wait(for: 20) }
        service.cancel()
        try await withDeadline("run to return") { await service.value }
        #expect(ended.count == 20, "run returns only after every effect ended")
        #expect(loop.statistics.effectsCancelled == 20)
        loop.send(.increment)
        #expect(loop.statistics.eventsDroppedAfterStop == 1)
    }

    @Test(arguments: Backend.allCases)
    func runReturnsWhenTheLoopIsStoppedElsewhere(backend: Backend) async throws {
        let loop = Loop(initial: Counter.State(), reduce: Counter.reduce, backend: backend)
        let running = Task { await loop.run() }
        await loop.stop()
        try await withDeadline("run to return") { await running.value }
    }

    @Test(arguments: Backend.allCases)
    func aSlowStatesReaderWithBufferingNewestSeesTheLatestState(backend: Backend) async throws {
        let loop = Loop(initial: Counter.State(), reduce: Counter.reduce, backend: backend)
        let latest = loop.states(bufferingPolicy: .bufferingNewest(1))
        let everything = loop.states
        for _ in 0..<100 { loop.send(.increment) }
        await loop.waitUntilIdle()
        await loop.stop()
        var fromLatest: [Int] = []
        for await state in latest { fromLatest.append(state.count) }
        var fromEverything: [Int] = []
        for await state in everything { fromEverything.append(state.count) }
        #expect(fromLatest == [100])
        #expect(fromEverything == Array(0...100))
    }

    @Test(arguments: Backend.allCases)
    func endingAStatesIterationRemovesTheSubscriber(backend: Backend) async throws {
        let loop = Loop(initial: Counter.State(), reduce: Counter.reduce, backend: backend)
        do {
            for await state in loop.states where state.count == 0 { break }
        }
        try await withDeadline("the subscriber to leave the loop") {
            while await loop.engine.observerCount() != 0 { await Task.yield() }
        }
        for _ in 0..<10 { loop.send(.increment) }
        await loop.waitUntilIdle()
        #expect(loop.state.count == 10)
        #expect(await loop.engine.observerCount() == 0, "the ended iteration's subscriber is still there")
        await loop.stop()
    }
}
