import FeedbackLoop
import Testing

/// Rule 7: `requests` starts added requests concurrently, cancels removed ones, leaves unchanged
/// ones running, and an empty set cancels all.
@Suite("7. requests: one effect per request, started side by side")
struct RequestsTests {
    struct State: Equatable, Sendable {
        var requests: Set<Int> = []
        var done: [Int] = []
    }

    enum Event: Equatable, Sendable {
        case set(Set<Int>)
        case done(Int)
    }

    @Sendable
    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .set(let requests): state.requests = requests
        case .done(let id): state.done.append(id)
        }
    }

    @Test(arguments: Backend.allCases)
    func addedRequestsRunConcurrently(backend: Backend) async throws {
        // Each effect waits until all three have started: run one after another, they would hang.
        let started = CountdownLatch()
        let loop = Loop(
            initial: State(),
            reduce: Self.reduce,
            feedbacks: [
                .requests({ $0.requests }) { id in
                    .run { send in
                        started.increment()
                        await started.wait(for: 3)
                        send(.done(id))
                    }
                },
            ],
            backend: backend)
        loop.send(.set([1, 2, 3]))
        try await withDeadline("three concurrent requests") { await loop.waitUntilIdle() }
        #expect(Set(loop.state.done) == [1, 2, 3])
        #expect(loop.statistics.effectsFinished == 3)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func removedRequestsAreCancelledAndUnchangedOnesKeepRunning(backend: Backend) async throws {
        let probe = EffectProbe()
        let loop = Loop(
            initial: State(),
            reduce: Self.reduce,
            feedbacks: [.requests({ $0.requests }) { id in probe.effect("\(id)") }],
            backend: backend)
        try await loop.sendAndWait(.set([1, 2]))
        #expect(Set(probe.entries) == [.started("1"), .started("2")])

        try await loop.sendAndWait(.set([2, 3]))
        #expect(probe.cancelled("1") == 1)
        #expect(probe.started("2") == 1, "an unchanged request is not restarted")
        #expect(probe.cancelled("2") == 0)
        #expect(probe.started("3") == 1)

        try await loop.sendAndWait(.set([2, 3]))
        #expect(probe.entries.count == 4, "the same set again changes nothing")

        try await loop.sendAndWait(.set([]))
        #expect(probe.cancelled("2") == 1)
        #expect(probe.cancelled("3") == 1)
        #expect(loop.statistics.effectsRunning == 0)
        #expect(loop.statistics.effectsCancelled == 3)
        await loop.stop()
        #expect(probe.entries.count == 6, "stop has nothing left to cancel")
    }
}
