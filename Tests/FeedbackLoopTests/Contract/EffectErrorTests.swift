import FeedbackLoop
import Logging
import Testing

/// Rule 8: an effect that throws neither crashes nor stops the loop; the error reaches a hook the
/// user can set, and by default is logged.
@Suite("8. A throwing effect is reported, not fatal")
struct EffectErrorTests {
    struct Boom: Error, Equatable {}

    static func failing() -> [Feedback<Counter.State, Counter.Event>] {
        [
            .skippingRepeated({ $0.query }) { query in
                .run { send in
                    if query == 1 { throw Boom() }
                    send(.add(query))
                }
            },
        ]
    }

    @Test(arguments: Backend.allCases)
    func theErrorReachesTheHookAndTheLoopGoesOn(backend: Backend) async throws {
        let errors = Locked<[any Error]>([])
        let loop = Loop(
            initial: Counter.State(),
            reduce: Counter.reduce,
            feedbacks: Self.failing(),
            backend: backend,
            configuration: LoopConfiguration(onEffectError: { errors.append($0) }))
        loop.send(.setQuery(1))
        await loop.waitUntilIdle()
        #expect(errors.current.count == 1)
        #expect(errors.current.first is Boom)
        #expect(loop.statistics.effectsFailed == 1)

        loop.send(.setQuery(5))
        await loop.waitUntilIdle()
        #expect(loop.state.count == 5, "the loop still runs effects and reduces events")
        #expect(loop.statistics.effectsFinished == 1)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func byDefaultTheErrorIsLogged(backend: Backend) async throws {
        let messages = Locked<[(level: Logger.Level, message: String)]>([])
        let logger = CapturingLogHandler.logger(into: messages)
        let loop = Loop(
            initial: Counter.State(),
            reduce: Counter.reduce,
            feedbacks: Self.failing(),
            backend: backend,
            configuration: LoopConfiguration(label: "errors", logger: logger))
        loop.send(.setQuery(1))
        await loop.waitUntilIdle()
        // Once, at error; the logger at trace also gets the loop's detail, at debug and trace.
        let logged = messages.current.filter { $0.0 >= .warning }
        #expect(logged.count == 1)
        #expect(logged.first?.0 == .error)
        #expect(logged.first?.1.contains("Boom") == true)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func errorsFromCancelledEffectsAreExpectedAndNotReported(backend: Backend) async throws {
        let errors = Locked(0)
        let loop = Loop(
            initial: Counter.State(query: 1),
            reduce: Counter.reduce,
            feedbacks: [
                .skippingRepeated({ $0.query }) { _ in
                    .run { _ in
                        await suspendUntilCancelled()
                        throw CancellationError()
                    }
                },
            ],
            backend: backend,
            configuration: LoopConfiguration(onEffectError: { _ in errors.increment() }))
        try await loop.sendAndWait(.setQuery(2))
        await loop.stop()
        #expect(errors.current == 0)
        #expect(loop.statistics.effectsCancelled == 2)
        #expect(loop.statistics.effectsFailed == 0)
    }
}
