import FeedbackExamples
import FeedbackLoop
import Testing

@Suite("Counter: the post's simplest loop")
struct CounterTests {
    @Test("plus and minus change the count")
    func reducer() {
        var state = Counter.initialState
        Counter.reduce(&state, .increment)
        Counter.reduce(&state, .increment)
        Counter.reduce(&state, .decrement)
        #expect(state == Counter.State(count: 1))
        Counter.reduce(&state, .decrement)
        Counter.reduce(&state, .decrement)
        #expect(state.count == -1)
    }

    @Test("taps from many tasks are all counted", arguments: Backend.allCases)
    func concurrentTaps(_ backend: Backend) async {
        let loop = Counter.makeLoop(environment: .init(), backend: backend)
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for _ in 0..<100 { loop.send(task.isMultiple(of: 2) ? .increment : .decrement) }
                    for _ in 0..<25 { loop.send(.increment) }
                }
            }
        }
        await loop.waitUntilIdle()
        #expect(loop.state.count == 8 * 25)
        #expect(loop.statistics.eventsReduced == 8 * 125)
    }

    @Test("sendAndWait returns the count right after its tap", arguments: Backend.allCases)
    func sendAndWait(_ backend: Backend) async throws {
        let loop = Counter.makeLoop(environment: .init(), backend: backend)
        #expect(try await loop.sendAndWait(.increment).count == 1)
        #expect(try await loop.sendAndWait(.increment).count == 2)
        #expect(try await loop.sendAndWait(.decrement).count == 1)
    }
}
