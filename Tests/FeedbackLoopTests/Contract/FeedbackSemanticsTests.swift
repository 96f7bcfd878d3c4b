import FeedbackLoop
import Testing

/// When each feedback constructor starts and cancels its effects.
@Suite("Feedback constructors start and cancel at the right moments")
struct FeedbackSemanticsTests {
    typealias Step = (event: Counter.Event, expected: [EffectProbe.Entry])

    /// Sends each event and checks the effect starts/cancellations it caused, in order.
    func check(
        _ feedback: (EffectProbe) -> Feedback<Counter.State, Counter.Event>,
        initial: Counter.State = Counter.State(),
        atStart: [EffectProbe.Entry] = [],
        steps: [Step],
        backend: Backend
    ) async throws {
        let probe = EffectProbe()
        let loop = Loop(initial: initial, reduce: Counter.reduce, feedbacks: [feedback(probe)], backend: backend)
        await loop.barrier()
        #expect(probe.entries == atStart)
        var seen = atStart.count
        for step in steps {
            try await loop.sendAndWait(step.event)
            let entries = probe.entries
            #expect(Array(entries[seen...]) == step.expected, "after \(step.event)")
            seen = entries.count
        }
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func skippingRepeatedRestartsOnlyOnANewValue(backend: Backend) async throws {
        try await check(
            { probe in .skippingRepeated({ $0.query }) { probe.effect("q\($0)") } },
            steps: [
                (.setQuery(1), [.started("q1")]),
                (.increment, []),
                (.setQuery(1), []),
                (.setQuery(2), [.cancelled("q1"), .started("q2")]),
                (.setQuery(nil), [.cancelled("q2")]),
                (.setQuery(nil), []),
                (.setQuery(2), [.started("q2")]),
            ],
            backend: backend)
    }

    @Test(arguments: Backend.allCases)
    func lensingRestartsOnEveryNonNilState(backend: Backend) async throws {
        try await check(
            { probe in .lensing({ $0.query }) { probe.effect("q\($0)") } },
            steps: [
                (.setQuery(1), [.started("q1")]),
                (.increment, [.cancelled("q1"), .started("q1")]),
                (.setQuery(nil), [.cancelled("q1")]),
                (.increment, []),
            ],
            backend: backend)
    }

    @Test(arguments: Backend.allCases)
    func firstValueAfterNilRunsWhileTheQueryIsPresent(backend: Backend) async throws {
        try await check(
            { probe in .firstValueAfterNil({ $0.query }) { probe.effect("q\($0)") } },
            initial: Counter.State(query: 1),
            atStart: [.started("q1")],
            steps: [
                (.setQuery(2), []),
                (.setQuery(nil), [.cancelled("q1")]),
                (.setQuery(3), [.started("q3")]),
            ],
            backend: backend)
    }

    @Test(arguments: Backend.allCases)
    func whenBecomesTrueIsEdgeTriggered(backend: Backend) async throws {
        try await check(
            { probe in .whenBecomesTrue({ $0.flag }) { probe.effect("at \($0.count)") } },
            steps: [
                (.increment, []),
                (.setFlag(true), [.started("at 1")]),
                (.increment, []),
                (.setFlag(true), []),
                (.setFlag(false), [.cancelled("at 1")]),
                (.setFlag(true), [.started("at 2")]),
            ],
            backend: backend)
    }

    @Test(arguments: Backend.allCases)
    func customSeesEachStateWithTheEventThatCausedIt(backend: Backend) async throws {
        let seen = Locked<[String]>([])
        let loop = Loop(
            initial: Counter.State(),
            reduce: Counter.reduce,
            feedbacks: [
                .custom { state, event in
                    seen.append("\(state.count) after \(event.map { "\($0)" } ?? "start")")
                    return event == .increment && state.count == 2 ? .send(.add(10)) : .none
                },
            ],
            backend: backend)
        loop.send(.increment)
        loop.send(.increment)
        await loop.waitUntilIdle()
        #expect(seen.current == ["0 after start", "1 after increment", "2 after increment", "12 after add(10)"])
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func anAsyncSequenceSourceIsIteratedUntilStop(backend: Backend) async throws {
        let (stream, continuation) = AsyncStream.makeStream(of: Counter.Event.self)
        let loop = Loop(initial: Counter.State(), reduce: Counter.reduce, feedbacks: [.events(stream)], backend: backend)
        let states = loop.states
        continuation.yield(.add(2))
        continuation.yield(.add(3))
        try await withDeadline("the source's events") {
            for await state in states where state.count == 5 { break }
        }
        await loop.stop()
        #expect(loop.statistics.effectsCancelled == 1, "stop cancels the iteration")
        continuation.yield(.add(100))
        #expect(loop.state.count == 5)
    }
}
