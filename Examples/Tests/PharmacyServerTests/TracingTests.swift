import FeedbackExamples
import FeedbackLoop
import InMemoryTracing
import PharmacyServer
import Testing
import Tracing

/// The fake back end, with a span per call, made in the caller's context as a traced HTTP or
/// database client's would be.
struct TracedPharmaciesService: PharmaciesService {
    let base = FakePharmaciesService(saved: FakePharmaciesService.sampleSaved, latency: .zero)
    let tracer: InMemoryTracer

    func fetchPharmacies() async throws -> [Pharmacy] {
        try await tracer.withSpan("pharmacies.fetch") { _ in try await base.fetchPharmacies() }
    }

    func add(_ pharmacy: Pharmacy) async throws -> Pharmacy {
        try await tracer.withSpan("pharmacies.add") { _ in try await base.add(pharmacy) }
    }

    func delete(_ pharmacy: Pharmacy) async throws {
        try await tracer.withSpan("pharmacies.delete") { _ in try await base.delete(pharmacy) }
    }
}

/// One HTTP request, one trace: the request's span, the `reduce` span of the event it sent, the
/// `effect` span of the save that event's state started, and the back end's call inside the
/// effect, each the child of the one before; and the event the save sent reduced under it.
@Suite(.timeLimit(.minutes(2)))
struct TracingTests {
    @Test(arguments: Backend.allCases)
    func oneRequestIsOneTraceDownToTheBackEndsCall(backend: Backend) async throws {
        let tracer = InMemoryTracer()
        try await RunningServer.with(
            sessions: .init(
                backend: backend, makeService: { _ in TracedPharmaciesService(tracer: tracer) },
                logger: RunningServer.quiet, tracer: tracer)
        ) { running in
            let api = running.api
            #expect(try await api.open("alice").status == .created)
            #expect(try await api.post("alice", .addPharmacy).status == .ok)
            let superdrug = FakePharmaciesService.sampleMapPlaces[1]
            #expect(try await api.post("alice", .pickPlace(reference: superdrug.reference)).status == .ok)
            // The save and its answer run after the response; the request's span ends once the
            // response is written.
            try await bounded("the save's spans and the request's to end") {
                while !Self.hasSavedTrace(tracer.finishedSpans) { await Task.yield() }
            }
        }

        let spans = tracer.finishedSpans
        let call = try #require(spans.first { $0.operationName == "pharmacies.add" })
        let effect = try #require(spans.first { $0.spanID == call.parentSpanID })
        #expect(effect.operationName == "effect")
        // The save ends with a plain `send(.didAdd)`, which moves the state off the save's query: on
        // `callback` that cancels the effect inside the send (see `Effect.run`), elsewhere it may
        // finish first. Either way its span has ended, with the outcome.
        #expect(["finished", "cancelled"].map(SpanAttribute.string).contains(effect.attributes.get("feedback_loop.effect.outcome")))
        let reduce = try #require(spans.first { $0.spanID == effect.parentSpanID })
        #expect(reduce.operationName == "reduce")
        #expect(reduce.attributes.get("feedback_loop.label") == "pharmacies")
        #expect(reduce.attributes.get("feedback_loop.event") == "didSelectPlace")
        let request = try #require(spans.first { $0.spanID == reduce.parentSpanID })
        #expect(request.kind == .server)
        #expect(request.attributes.get("http.request.method") == "POST")
        #expect(request.parentSpanID == nil, "the request's span begins the trace")
        let answer = spans.filter { $0.parentSpanID == effect.spanID && $0.operationName == "reduce" }
        #expect(answer.map { $0.attributes.get("feedback_loop.event") } == ["didAdd"])
        #expect(Set([call, effect, reduce, request].map(\.traceID)).count == 1, "one trace")
        // Nothing else joined the request's trace but the loop's work it caused.
        let trace = spans.filter { $0.traceID == request.traceID }
        #expect(Set(trace.map(\.operationName)).isSubset(of: [request.operationName, "reduce", "effect", "pharmacies.add"]))
    }

    /// Whether the save's call and its effect have ended, and the request whose event started it.
    static func hasSavedTrace(_ spans: [FinishedInMemorySpan]) -> Bool {
        guard let call = spans.first(where: { $0.operationName == "pharmacies.add" }),
            let effect = spans.first(where: { $0.spanID == call.parentSpanID }),
            let reduce = spans.first(where: { $0.spanID == effect.parentSpanID })
        else { return false }
        return spans.contains { $0.spanID == reduce.parentSpanID }
            && spans.contains { $0.parentSpanID == effect.spanID && $0.operationName == "reduce" }
    }
}
