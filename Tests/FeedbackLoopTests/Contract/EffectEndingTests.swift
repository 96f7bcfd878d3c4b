import FeedbackLoop
import Testing

/// Rule 11: an effect that ends with its result is *finished*, never cancelled by its own last
/// event, and its cleanup runs undisturbed — identically on every backend, so a deterministic
/// script has identical statistics everywhere.
@Suite("11. An effect's last word ends it finished, on every backend")
struct EffectEndingTests {
    /// An order desk: each order is processed by an effect whose result moves the desk to the
    /// next order, i.e. off the query that started the effect.
    enum Desk {
        struct State: Equatable, Sendable {
            var processing: Int? = 1
            var done: [Int] = []
        }

        enum Event: Equatable, Sendable {
            case processed(Int)
        }

        static let orders = 20

        @Sendable
        static func reduce(_ state: inout State, _ event: Event) {
            guard case .processed(let order) = event else { return }
            state.done.append(order)
            state.processing = order < orders ? order + 1 : nil
        }
    }

    enum Ending: CaseIterable, Sendable {
        case finishSending, task
    }

    @Test(arguments: Backend.allCases, Ending.allCases)
    func anEffectWhoseResultMovesTheQueryOnIsFinishedAndItsCleanupRuns(backend: Backend, ending: Ending) async throws {
        let cleanups = Locked<[Bool]>([])  // whether each cleanup saw cancellation
        let loop = Loop(
            initial: Desk.State(),
            reduce: Desk.reduce,
            feedbacks: [
                .skippingRepeated({ $0.processing }) { order in
                    switch ending {
                    case .finishSending:
                        .run { send in
                            send.finish(sending: .processed(order))
                            cleanups.append(Task.isCancelled)  // the audit write after the result
                        }
                    case .task:
                        .task {
                            defer { cleanups.append(Task.isCancelled) }
                            return .processed(order)
                        }
                    }
                },
            ],
            backend: backend)
        try await withDeadline("every order") { await loop.waitUntilIdle() }
        #expect(loop.state.done == Array(1...Desk.orders))
        #expect(cleanups.current == Array(repeating: false, count: Desk.orders), "a cleanup saw its effect cancelled")
        var expected = LoopStatistics()
        expected.eventsReduced = Desk.orders
        expected.effectsStarted = Desk.orders
        expected.effectsFinished = Desk.orders
        #expect(loop.statistics == expected, "the same script must give the same statistics on every backend")
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func aCallbackEffectFinishingWithAnEventOnAnotherThreadIsFinished(backend: Backend) async throws {
        let sink = Locked<Sink<Counter.Event>?>(nil)
        let cancellations = Locked(0)
        let loop = Loop(
            initial: Counter.State(query: 1),
            reduce: Counter.reduce,
            feedbacks: [
                .skippingRepeated({ $0.query }) { _ in
                    .callback { effectSink in
                        sink.withLock { $0 = effectSink }
                        return Cancellation { cancellations.increment() }
                    }
                },
            ],
            backend: backend)
        try await waitUntil("the effect to start") { sink.current != nil }
        await onThreads(1) { _ in sink.current?.finish(sending: .setQuery(nil)) }
        try await withDeadline("the last event") { await loop.waitUntilIdle() }
        #expect(loop.state.query == nil)
        #expect(cancellations.current == 0, "a finished effect's cancellation ran")
        let statistics = loop.statistics
        #expect(statistics.effectsFinished == 1)
        #expect(statistics.effectsCancelled == 0)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func aLastEventAfterTheLoopCancelledTheEffectIsDroppedAndCounted(backend: Backend) async throws {
        let sink = Locked<Sink<Counter.Event>?>(nil)
        let loop = Loop(
            initial: Counter.State(query: 1),
            reduce: Counter.reduce,
            feedbacks: [
                .skippingRepeated({ $0.query }) { query in
                    .callback { effectSink in
                        if query == 1 { sink.withLock { $0 = effectSink } }
                        return .none
                    }
                },
            ],
            backend: backend)
        try await waitUntil("the effect to start") { sink.current != nil }
        loop.send(.setQuery(2))  // cancels the effect of query 1
        await loop.barrier()
        sink.current?.finish(sending: .increment)
        await loop.barrier()
        #expect(loop.state.count == 0)
        let statistics = loop.statistics
        #expect(statistics.eventsDroppedFromCancelledEffects == 1)
        #expect(statistics.effectsCancelled == 1)
        #expect(statistics.effectsFinished == 0)
        await loop.stop()
    }
}

/// What tells the backends apart, pinned so that a change of engine cannot blur it.
@Suite("Where each backend runs the reducer")
struct BackendCharacterTests {
    @Test
    func onAnIdleCallbackLoopTheEventIsReducedWhenSendReturns() async {
        let loop = Loop(initial: Counter.State(), reduce: Counter.reduce, backend: .callback)
        let seen = Locked<[Int]>([])
        await onThreads(1) { _ in
            for _ in 0..<100 {
                let before = loop.state.count
                loop.send(.increment)
                seen.append(loop.state.count - before)
            }
        }
        #expect(seen.current == Array(repeating: 1, count: 100))
        await loop.stop()
    }

    @Test
    func theActorNeverRunsTheReducerOnTheSendersThread() async {
        let reducerThreads = Locked<Set<UInt>>([])
        let loop = Loop(
            initial: Counter.State(),
            reduce: { state, event in
                reducerThreads.withLock { _ = $0.insert(currentThreadID()) }
                Counter.reduce(&state, event)
            },
            backend: .actor)
        let senderThreads = Locked<Set<UInt>>([])
        await onThreads(4) { _ in
            senderThreads.withLock { _ = $0.insert(currentThreadID()) }
            for _ in 0..<1_000 { loop.send(.increment) }
        }
        await loop.waitUntilIdle()
        #expect(loop.state.count == 4_000)
        #expect(reducerThreads.current.isDisjoint(with: senderThreads.current))
        await loop.stop()
    }
}

extension EffectEndingTests {
    @Test(arguments: Backend.allCases)
    func stopCancelsTheCleanupOfAnEffectThatAlreadyFinished(backend: Backend) async throws {
        let finished = Gate()
        let cleanupEnded = Locked<Bool?>(nil)  // whether the cleanup saw cancellation
        let loop = Loop(
            initial: Counter.State(query: 1),
            reduce: Counter.reduce,
            feedbacks: [
                .skippingRepeated({ $0.query }) { _ in
                    .run { send in
                        send.finish(sending: .increment)
                        finished.open()
                        await suspendUntilCancelled()  // a cleanup that runs until told to stop
                        cleanupEnded.withLock { $0 = Task.isCancelled }
                    }
                },
            ],
            backend: backend)
        try await withDeadline("the effect to finish") { await finished.wait() }
        try await withDeadline("stop, which must cancel the cleanup") { await loop.stop() }
        #expect(cleanupEnded.current == true)
        let statistics = loop.statistics
        #expect(statistics.effectsFinished == 1)
        #expect(statistics.effectsCancelled == 0, "a finished effect is not counted as cancelled")
    }
}
