import FeedbackLoop
@testable import FeedbackLoopDurable
import FeedbackLoopDurableTesting
import Foundation
import Testing

/// A search whose effect answers when the test lets it: the answer of a search that an event
/// ahead of it cancelled must never be reduced, as in a plain `Loop`.
enum Search {
    struct State: Codable, Sendable, Equatable {
        var query: Int?
        var answers: [Int] = []
        var notes: [Int] = []
    }

    enum Event: Codable, Sendable, Equatable {
        case search(Int)
        case clear
        case note(Int)
        case answered(Int)
    }

    @Sendable
    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .search(let query): state.query = query
        case .clear: state.query = nil
        case .note(let note): state.notes.append(note)
        case .answered(let answer): state.answers.append(answer)
        }
    }

    /// While a query is set, an effect waits for `gate`, then answers with a plain `send` (so it
    /// is still running, and cancellable, when its answer waits in the queue).
    static func feedbacks(started: Probe<Int>, gate: Gate) -> [Feedback<State, Event>] {
        [
            .skippingRepeated({ $0.query }) { query in
                .run { send in
                    started.record(query)
                    await gate.wait()
                    send(.answered(query))
                    await suspendUntilCancelled()
                }
            }
        ]
    }
}

/// Returns once the calling task is cancelled: a never-ending effect's body.
func suspendUntilCancelled() async {
    let (forever, continuation) = AsyncStream<Never>.makeStream()
    for await _ in forever {}  // ends when the task is cancelled
    continuation.finish()
}

/// Opens once; everyone waiting, and everyone who waits later, goes on.
final class Gate: Sendable {
    let state = Lock<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let open = state.withLock { state in
                if !state.open { state.waiting.append(continuation) }
                return state.open
            }
            if open { continuation.resume() }
        }
    }

    func open() {
        let waiting = state.withLock { state in
            state.open = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}

/// Records the inner loop's steps as text, to know when it has accepted an effect's event.
struct StepRecorder: LoopInstrument {
    let steps: Probe<String>

    func instrumentation<State: Sendable, Event: Sendable>(state: State.Type, event: Event.Type) -> LoopInstrumentation<State, Event> {
        let steps = self.steps
        return LoopInstrumentation(onTransition: { _, event, _ in steps.record(String(describing: event)) })
    }
}

@Suite("Durable loops drop the events of effects cancelled before their turn")
struct CancelledEffectTests {
    static func journalPath() -> String {
        TemporaryFiles.path("cancelled")
    }

    /// Runs [search 7] → the effect starts; then holds the journal, sends `ahead` (journaled, not
    /// yet reduced) and lets the effect answer while `ahead` is held, so that the inner loop
    /// accepts the answer before `ahead` is reduced. Returns the loop's state, its journal's
    /// events and its drop count after a last event.
    static func race(
        backend: Backend, ahead: Search.Event
    ) async throws -> (state: Search.State, journaled: [Search.Event], dropped: Int, recovered: Search.State) {
        let path = journalPath()
        let journal = RecordingJournal(try SQLiteJournal(path: path))
        let started = Probe<Int>()
        let steps = Probe<String>()
        let gate = Gate()
        let loop = try await DurableLoop(
            id: "search", journal: journal, initial: Search.State(), reduce: Search.reduce,
            feedbacks: { _ in Search.feedbacks(started: started, gate: gate) },
            backend: backend, loopConfiguration: LoopConfiguration(instruments: [StepRecorder(steps: steps)]))
        // Observers of the inner loop run after its feedbacks, so one that sees the answer's step
        // knows that the durable layer has taken the answer in.
        let accepted = Probe<Bool>()
        let isAnswer: @Sendable (String) -> Bool = { step in step.contains("proposed") && step.contains("answered(7)") }
        let innerObservation = loop.loop.observe { _ in accepted.record(steps.entries.contains(where: isAnswer)) }
        try await loop.sendAndWait(.search(7))
        try await started.wait(for: "the search effect to start") { $0 == [7] }

        journal.hold()
        try loop.send(ahead)
        try await journal.begun.wait(for: "the append of event 2 to begin") { $0.contains(2) }
        gate.open()
        try await accepted.wait(for: "the inner loop to accept the answer while event 2 is held") { $0.contains(true) }
        innerObservation.cancel()
        journal.release()
        let state = try await loop.sendAndWait(.note(99))
        let dropped = loop.eventsDroppedFromCancelledEffects
        await loop.stop()

        let records = try await SQLiteJournal(path: path).events(loop: "search", after: 0, limit: 100)
        let journaled = try records.map { try JSONDecoder().decode(Search.Event.self, from: Data($0.payload)) }
        let recovered = try await DurableLoop(
            id: "search", journal: try SQLiteJournal(path: path), initial: Search.State(), reduce: Search.reduce,
            backend: backend)
        let recoveredState = recovered.state
        await recovered.stop()
        return (state, journaled, dropped, recoveredState)
    }

    @Test(arguments: Backend.allCases)
    func anAnswerWhoseSearchAnEarlierEventCancelledIsDropped(backend: Backend) async throws {
        let outcome = try await Self.race(backend: backend, ahead: .clear)
        #expect(outcome.state == Search.State(query: nil, answers: [], notes: [99]))
        #expect(outcome.journaled == [.search(7), .clear, .note(99)])
        #expect(outcome.dropped == 1)
        #expect(outcome.recovered == outcome.state)
    }

    @Test(arguments: Backend.allCases)
    func anAnswerWhoseSearchSurvivesTheEventsAheadIsJournaledAfterThem(backend: Backend) async throws {
        let outcome = try await Self.race(backend: backend, ahead: .note(1))
        #expect(outcome.state == Search.State(query: 7, answers: [7], notes: [1, 99]))
        #expect(outcome.journaled == [.search(7), .note(1), .answered(7), .note(99)])
        #expect(outcome.dropped == 0)
        #expect(outcome.recovered == outcome.state)
    }
}

/// Two searches side by side, one effect each (`requests`): cancelling one must not void the
/// other's answer.
enum Searches {
    struct State: Codable, Sendable, Equatable {
        var queries: Set<Int> = []
        var answers: [Int] = []
    }

    enum Event: Codable, Sendable, Equatable {
        case search(Int)
        case drop(Int)
        case answered(Int)
    }

    @Sendable
    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .search(let query): state.queries.insert(query)
        case .drop(let query): state.queries.remove(query)
        case .answered(let answer): state.answers.append(answer)
        }
    }

    static func feedbacks(started: Probe<Int>, gate: Gate) -> [Feedback<State, Event>] {
        [
            .requests({ $0.queries }) { query in
                .run { send in
                    started.record(query)
                    await gate.wait()
                    send(.answered(query))
                    await suspendUntilCancelled()
                }
            }
        ]
    }
}

extension CancelledEffectTests {
    /// [search 7, search 8] → both effects start; the journal is held on [drop 8], and both
    /// answer meanwhile: 8's answer is dropped, 7's — another effect of the same feedback — is
    /// journaled after the drop, as a plain loop would reduce it.
    @Test(arguments: Backend.allCases)
    func cancellingOneRequestLeavesItsSiblingsAnswer(backend: Backend) async throws {
        let path = Self.journalPath()
        let journal = RecordingJournal(try SQLiteJournal(path: path))
        let started = Probe<Int>()
        let steps = Probe<String>()
        let gate = Gate()
        let loop = try await DurableLoop(
            id: "searches", journal: journal, initial: Searches.State(), reduce: Searches.reduce,
            feedbacks: { _ in Searches.feedbacks(started: started, gate: gate) },
            backend: backend, loopConfiguration: LoopConfiguration(instruments: [StepRecorder(steps: steps)]))
        let accepted = Probe<Int>()
        let innerObservation = loop.loop.observe { _ in
            accepted.record(steps.entries.count { $0.contains("proposed") && $0.contains("answered(") })
        }
        try await loop.sendAndWait(.search(7))
        try await loop.sendAndWait(.search(8))
        try await started.wait(for: "both searches to start") { Set($0) == [7, 8] }

        journal.hold()
        try loop.send(.drop(8))
        try await journal.begun.wait(for: "the append of event 3 to begin") { $0.contains(3) }
        gate.open()
        try await accepted.wait(for: "the inner loop to accept both answers while event 3 is held") { $0.contains(2) }
        innerObservation.cancel()
        journal.release()
        try await loop.sendAndWait(.search(9))
        let state = loop.state
        let dropped = loop.eventsDroppedFromCancelledEffects
        await loop.stop()

        let records = try await SQLiteJournal(path: path).events(loop: "searches", after: 0, limit: 100)
        let journaled = try records.map { try JSONDecoder().decode(Searches.Event.self, from: Data($0.payload)) }
        #expect(state.answers == [7], "the sibling's answer was voided by another request's cancellation")
        #expect(journaled.prefix(4) == [.search(7), .search(8), .drop(8), .answered(7)])
        #expect(dropped == 1)
    }
}
