import FeedbackLoop
import Testing

/// Rule 2: events are reduced one at a time, in the order their `send` calls returned; per-sender
/// order holds; nothing is lost or duplicated.
@Suite("2. Events are reduced one at a time, in order, none lost")
struct OrderingTests {
    /// Each sender numbers its events; the reducer checks each sender's sequence as it goes.
    struct Tally: Equatable, Sendable {
        var next: [Int]
        var outOfOrder = 0
        var total = 0
        var inReducer = false
        var overlapping = 0
    }

    struct Numbered: Sendable, Equatable {
        let sender: Int
        let sequence: Int
    }

    @Sendable
    static func tally(_ state: inout Tally, _ event: Numbered) {
        if state.inReducer { state.overlapping += 1 }
        state.inReducer = true
        if state.next[event.sender] != event.sequence { state.outOfOrder += 1 }
        state.next[event.sender] = event.sequence + 1
        state.total += 1
        state.inReducer = false
    }

    @Test(arguments: Backend.allCases)
    func eightThreadsSendingAHundredThousandEventsEachLoseAndReorderNothing(backend: Backend) async throws {
        let senders = 8
        let perSender = Scale.of(100_000)
        let loop = Loop(initial: Tally(next: Array(repeating: 0, count: senders)), reduce: Self.tally, backend: backend)

        await onThreads(senders) { sender in
            for sequence in 0..<perSender {
                loop.send(Numbered(sender: sender, sequence: sequence))
            }
        }
        try await withDeadline("\(senders * perSender) events to be reduced", limit: .seconds(300)) { await loop.waitUntilIdle() }

        let state = loop.state
        #expect(state.total == senders * perSender)
        #expect(state.next == Array(repeating: perSender, count: senders))
        #expect(state.outOfOrder == 0)
        #expect(state.overlapping == 0)
        #expect(loop.statistics.eventsReduced == senders * perSender)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func anEventSentAfterAnotherSendReturnedIsReducedAfterIt(backend: Backend) async throws {
        let loop = Loop(initial: Counter.State(), reduce: Counter.reduce, backend: backend)
        for round in 0..<200 {
            // One thread's send returns, then another thread sends: the order must hold across threads.
            await onThreads(1) { _ in loop.send(.record(round * 2)) }
            loop.send(.record(round * 2 + 1))
        }
        await loop.waitUntilIdle()
        #expect(loop.state.history == Array(0..<400))
        await loop.stop()
    }
}
