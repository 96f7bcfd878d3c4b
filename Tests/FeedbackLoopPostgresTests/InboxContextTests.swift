#if Postgres
import FeedbackLoop
import FeedbackLoopDurable
import FeedbackLoopDurableTesting
import FeedbackLoopPostgres
import Foundation
import Instrumentation
import SharedTestSupport
import PostgresNIO
import Testing

/// Carries the request id as one header, as a tracer carries `traceparent`.
private struct RequestInstrument: Instrument {
    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        if let id = context.requestID { injector.inject(id, forKey: "x-request-id", into: &carrier) }
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract.Carrier == Carrier {
        if let id = extractor.extract(key: "x-request-id", from: carrier) { context.requestID = id }
    }
}

/// Values recorded by the owner's loop; each starts an effect that notes the request it runs for.
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
}

/// Rule: an event another node sends through the inbox keeps its sender's `ServiceContext`: the
/// owner's effects for it run in that context (the trace crosses nodes), an event sent in none
/// arrives in none, and headers another tool garbled cost the context, not the event.
@Suite("The PostgreSQL inbox carries the sender's ServiceContext", .enabled(if: Server.url != nil, Server.skipReason))
struct InboxContextTests {
    static func journal() -> PostgresJournal {
        PostgresJournal(client: Server.client, node: "node-\(UInt64.random(in: 0...UInt64.max))", instrument: RequestInstrument())
    }

    @Test(arguments: Backend.allCases)
    func theOwnersEffectsRunInTheSendersContext(backend: Backend) async throws {
        let id = "inbox-context-\(UInt64.random(in: 0...UInt64.max))"
        let journal = Self.journal()
        let ran = Probe<String>()
        let loop = try await DurableLoop(
            id: id, journal: journal, initial: Recorder.State(), reduce: Recorder.reduce,
            feedbacks: { _ in
                [.requests({ Set($0.values) }) { value in .run { _ in ran.record("\(value): \(ServiceContext.currentRequest)") } }]
            },
            backend: backend, loopConfiguration: LoopConfiguration(serviceContext: .enabled))
        let relaying = Task { try await InboxRelay(loop: loop, journal: journal, pollEvery: .seconds(30)).run() }
        let other = Self.journal()
        try await ServiceContext.$current.withValue(.request("remote")) {
            try await other.deliver(Recorder.Event.record(1), to: id)
        }
        try await other.deliver(Recorder.Event.record(2), to: id)
        let payload = ByteBuffer(bytes: Array(try JSONEncoder().encode(Recorder.Event.record(3))))
        try await Server.execute("""
            INSERT INTO feedbackloop_inbox (loop, schema_version, payload, trace_headers)
            VALUES (\(id), 1, \(payload), 'not json')
            """)
        try await Server.execute("SELECT pg_notify(\(PostgresJournal.inboxChannel), \(id))")
        try await ran.wait(for: "three relayed events' effects to run") { $0.count == 3 }
        await loop.stop()
        try await relaying.value
        #expect(ran.entries.sorted() == ["1: remote", "2: none", "3: none"])
    }
}
#endif
