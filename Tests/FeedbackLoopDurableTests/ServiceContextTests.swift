import FeedbackLoop
@testable import FeedbackLoopDurable
import FeedbackLoopDurableTesting
import Foundation
import Instrumentation
import SharedTestSupport
import Testing

/// Values recorded by a durable loop's state; each starts an effect that notes the request it
/// runs for, and value 1's effect also sends `.record(10)` (an effect's event, journaled too).
private enum Recorder {
    struct State: Codable, Sendable, Equatable {
        var values: [Int] = []
    }

    enum Event: Codable, Sendable, Equatable {
        case record(Int)
    }

    @Sendable
    static func reduce(_ state: inout State, _ event: Event) {
        if case .record(let value) = event { state.values.append(value) }
    }

    static func feedbacks(ran: Probe<String>) -> [Feedback<State, Event>] {
        [
            .requests({ Set($0.values) }) { value in
                .run { send in
                    ran.record("\(value): \(ServiceContext.currentRequest)")
                    if value == 1 { send(.record(10)) }
                }
            }
        ]
    }
}

/// Rule: a durable loop that propagates `ServiceContext` keeps each sender's context across its
/// own hop, the journal write before the event acts: the effects an event causes run in its
/// sender's context, and an effect's events carry the effect's, on every backend. The loop is
/// created inside another request, whose context its committer task inherits and must not lend
/// to anybody's event.
@Suite("Durable loops carry ServiceContext through the journal")
struct DurableServiceContextTests {
    static func run(_ backend: Backend, propagation: ServiceContextPropagation) async throws -> [String] {
        let ran = Probe<String>()
        let loop = try await ServiceContext.$current.withValue(.request("creator")) {
            try await DurableLoop(
                id: "recorder", journal: InMemoryJournal(), initial: Recorder.State(), reduce: Recorder.reduce,
                feedbacks: { _ in Recorder.feedbacks(ran: ran) }, backend: backend,
                loopConfiguration: LoopConfiguration(serviceContext: propagation))
        }
        try ServiceContext.$current.withValue(.request("a")) { try loop.send(.record(1)) }
        try await ServiceContext.$current.withValue(.request("b")) { _ = try await loop.sendAndWait(.record(2)) }
        try loop.send(.record(3))  // in no request
        try await ran.wait(for: "four effects to run") { $0.count == 4 }
        await loop.stop()
        return ran.entries.sorted()
    }

    @Test("each effect runs in the context of the event that caused it", arguments: Backend.allCases)
    func effectsRunInTheirSendersContext(backend: Backend) async throws {
        let ran = try await Self.run(backend, propagation: .enabled)
        #expect(ran == ["10: a", "1: a", "2: b", "3: none"])
    }

    @Test("without propagation, no sender's context reaches an effect", arguments: Backend.allCases)
    func disabledPropagationCarriesNoSendersContext(backend: Backend) async throws {
        let ran = try await Self.run(backend, propagation: .disabled)
        #expect(!ran.contains { $0.hasSuffix(": a") || $0.hasSuffix(": b") }, "\(ran)")
    }
}
