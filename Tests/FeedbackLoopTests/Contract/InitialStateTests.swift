import FeedbackLoop
import Testing

/// Rule 1: the initial state reaches every feedback, and the effects it calls for start.
@Suite("1. The initial state reaches every feedback")
struct InitialStateTests {
    @Test(arguments: Backend.allCases)
    func everyFeedbackSeesTheInitialStateAndStartsItsEffect(backend: Backend) async throws {
        let probe = EffectProbe()
        let seen = Locked<[Counter.Event?]>([])
        let loop = Loop(
            initial: Counter.State(count: 7, query: 1, flag: true),
            reduce: Counter.reduce,
            feedbacks: [
                .skippingRepeated({ $0.query }) { query in probe.effect("skipping \(query)") },
                .lensing({ $0.query }) { query in probe.effect("lensing \(query)") },
                .firstValueAfterNil({ $0.query }) { query in probe.effect("first \(query)") },
                .whenBecomesTrue({ $0.flag }) { state in probe.effect("true at \(state.count)") },
                .requests({ Set([$0.count]) }) { request in probe.effect("request \(request)") },
                .custom { state, event in
                    seen.append(event)
                    return event == nil ? probe.effect("custom at \(state.count)") : .none
                },
            ],
            backend: backend)

        await loop.barrier()

        #expect(Set(probe.entries) == [
            .started("skipping 1"), .started("lensing 1"), .started("first 1"),
            .started("true at 7"), .started("request 7"), .started("custom at 7"),
        ])
        #expect(seen.current == [nil])
        #expect(loop.statistics.effectsStarted == 6)
        #expect(loop.statistics.effectsRunning == 6)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func eventsAnInitialEffectSendsAreReduced(backend: Backend) async throws {
        let loop = Loop(
            initial: Counter.State(query: 3),
            reduce: Counter.reduce,
            feedbacks: [.skippingRepeated({ $0.query }) { amount in .send(.add(amount)) }],
            backend: backend)
        await loop.waitUntilIdle()
        #expect(loop.state.count == 3)
        #expect(loop.statistics.eventsReduced == 1)
        await loop.stop()
    }
}

