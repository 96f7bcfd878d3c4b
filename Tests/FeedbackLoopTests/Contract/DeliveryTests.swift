import FeedbackLoop
import Testing

/// Rule 4: every state the reducer produces reaches every feedback and every observer, in order,
/// none skipped.
@Suite("4. Every state reaches every feedback and observer, in order")
struct DeliveryTests {
    @Test(arguments: Backend.allCases)
    func feedbacksAndObserversSeeEveryStateInOrder(backend: Backend) async throws {
        let feedbackA = Locked<[Int]>([])
        let feedbackB = Locked<[Int]>([])
        let loop = Loop(
            initial: Counter.State(),
            reduce: Counter.reduce,
            feedbacks: [
                .custom { state, _ in feedbackA.append(state.count); return .none },
                .custom { state, _ in feedbackB.append(state.count); return .none },
            ],
            backend: backend)
        let observerA = Locked<[Int]>([])
        let observerB = Locked<[Int]>([])
        let tokenA = loop.observe { observerA.append($0.count) }
        let tokenB = loop.observe { observerB.append($0.count) }

        await onThreads(4) { _ in
            for _ in 0..<1_000 { loop.send(.increment) }
        }
        await loop.waitUntilIdle()

        let everyState = Array(0...4_000)
        #expect(feedbackA.current == everyState)
        #expect(feedbackB.current == everyState)
        #expect(observerA.current == everyState)
        #expect(observerB.current == everyState)
        tokenA.cancel()
        tokenB.cancel()
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func anObserverJoiningMidStreamSeesTheCurrentStateThenEveryLaterOne(backend: Backend) async throws {
        let loop = Loop(initial: Counter.State(), reduce: Counter.reduce, backend: backend)
        let seen = Locked<[Int]>([])
        let joined = Gate()
        let sender = Task.detached {
            for index in 0..<2_000 {
                loop.send(.increment)
                if index == 1_000 { await joined.wait() }
            }
        }
        let token = loop.observe { seen.append($0.count) }
        joined.open()
        await sender.value
        await loop.waitUntilIdle()
        let states = seen.current
        #expect(states.last == 2_000)
        #expect(states == Array(states[0]...2_000), "no state skipped or repeated after joining")
        token.cancel()
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func theStatesSequenceStartsWithTheCurrentStateAndSkipsNothing(backend: Backend) async throws {
        let loop = Loop(initial: Counter.State(count: 10), reduce: Counter.reduce, backend: backend)
        let states = loop.states
        for _ in 0..<100 { loop.send(.increment) }
        await loop.waitUntilIdle()
        Task { await loop.stop() }
        var seen: [Int] = []
        for await state in states { seen.append(state.count) }
        #expect(seen == Array(10...110))
    }
}
