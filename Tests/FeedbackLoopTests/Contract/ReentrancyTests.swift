import FeedbackLoop
import Testing

/// Rule 3: a `send` from inside the loop is queued, never recursed into the reducer; long
/// synchronous chains run in constant stack; an event enqueued as a drain finishes is not lost.
@Suite("3. Re-entrant sends are queued, never recursed")
struct ReentrancyTests {
    /// Counts reducer entries that overlap another reducer call (re-entrancy or concurrency).
    final class ReducerGuard: Sendable {
        let depth = Locked(0)
        let violations = Locked(0)

        /// The counter's reducer, counting every call that starts while another is running.
        func reduce(_ state: inout Counter.State, _ event: Counter.Event) {
            if depth.increment() > 1 { violations.increment() }
            Counter.reduce(&state, event)
            depth.withLock { $0 -= 1 }
        }
    }

    @Test(arguments: Backend.allCases)
    func anObserverThatSendsIsQueuedBehindTheCurrentState(backend: Backend) async throws {
        let guardian = ReducerGuard()
        let loop = Loop(
            initial: Counter.State(),
            reduce: guardian.reduce,
            backend: backend)
        let seen = Locked<[Int]>([])
        let observerDepth = Locked(0)
        let nestedObserverCalls = Locked(0)
        let observation = loop.observe { state in
            // An engine that recursed would call this observer again from inside its own `send`.
            if observerDepth.increment() > 1 { nestedObserverCalls.increment() }
            seen.append(state.count)
            if state.count > 0 && state.count < 5 { loop.send(.increment) }
            observerDepth.withLock { $0 -= 1 }
        }
        loop.send(.increment)
        await loop.waitUntilIdle()
        #expect(seen.current == [0, 1, 2, 3, 4, 5])
        #expect(guardian.violations.current == 0)
        #expect(nestedObserverCalls.current == 0, "the observer was re-entered from its own send")
        observation.cancel()
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func eventsSentWhileAnEffectStartsAreQueuedInOrder(backend: Backend) async throws {
        let guardian = ReducerGuard()
        let loop = Loop(
            initial: Counter.State(),
            reduce: guardian.reduce,
            feedbacks: [
                .skippingRepeated({ $0.query }) { query in
                    .callback { sink in
                        sink(.record(query * 10))
                        sink(.record(query * 10 + 1))
                        sink.finish()
                        return .none
                    }
                },
            ],
            backend: backend)
        // Both events are queued, in this order, before the effect that `.setQuery(1)` starts
        // gets to send anything.
        let observation = loop.observe { state in
            if state.count == 1 && state.query == nil {
                loop.send(.setQuery(1))
                loop.send(.record(99))
            }
        }
        loop.send(.increment)
        await loop.waitUntilIdle()
        #expect(loop.state.history == [99, 10, 11])
        #expect(guardian.violations.current == 0)
        observation.cancel()
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func anEventSourceThatSendsWhileAttachingIsQueued(backend: Backend) async throws {
        let loop = Loop(
            initial: Counter.State(),
            reduce: Counter.reduce,
            feedbacks: [
                .events(register: { sink in
                    sink(.record(1))
                    sink(.record(2))
                    return .none
                }),
                .events([Counter.Event.record(3)].async),
            ],
            backend: backend)
        try await withDeadline("the event sources' events") {
            for await state in loop.states where state.history.count == 3 { break }
        }
        #expect(loop.state.history.prefix(2) == [1, 2])
        #expect(Set(loop.state.history) == [1, 2, 3])
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func aMillionEventChainEmittedSynchronouslyByAFeedbackCompletes(backend: Backend) async throws {
        let length = chainLength
        let loop = Loop(
            initial: Counter.State(),
            reduce: Counter.reduce,
            feedbacks: [.skippingRepeated({ $0.count < length ? $0.count : nil }) { _ in .send(.increment) }],
            backend: backend)
        // A recursive implementation would need a million nested frames and crash long before.
        try await withDeadline("a \(length)-event chain", limit: .seconds(300)) { await loop.waitUntilIdle() }
        #expect(loop.state.count == length)
        #expect(loop.statistics.eventsReduced == length)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func anEventEnqueuedAsADrainFinishesIsStillReduced(backend: Backend) async throws {
        // Senders race the drain's end over and over: with several threads sending single events,
        // one of them keeps finding the other's drain about to release the role. A lost wake-up
        // would strand an event in the queue and hang `waitUntilIdle` (caught by the deadline).
        let loop = Loop(initial: Counter.State(), reduce: Counter.reduce, backend: backend)
        for round in 1...100 {
            await onThreads(2) { _ in loop.send(.increment) }
            try await withDeadline("round \(round) to drain") { await loop.waitUntilIdle() }
            #expect(loop.state.count == round * 2)
        }
        let perThread = Scale.of(25_000)
        await onThreads(4) { _ in
            for _ in 0..<perThread { loop.send(.increment) }
        }
        try await withDeadline("\(4 * perThread) racing sends to drain") { await loop.waitUntilIdle() }
        #expect(loop.state.count == 200 + 4 * perThread)
        await loop.stop()
    }
}

let chainLength = Scale.of(1_000_000)

extension Array where Element: Sendable {
    /// The elements as an `AsyncSequence`.
    var async: AsyncStream<Element> {
        AsyncStream { continuation in
            for element in self { continuation.yield(element) }
            continuation.finish()
        }
    }
}
