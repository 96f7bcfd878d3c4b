import FeedbackLoop
import FeedbackLoopServices
import FeedbackLoopTracing
import InMemoryTracing
import ServiceLifecycleTestKit
import SharedTestSupport
import Testing
import Tracing

/// Rules: what a `LoopService` or a `LoopRegistry` refuses is in the caller's trace, with the
/// reason its error and its statistics give. An event a service refuses gets the `reduce` span of
/// an event that was not reduced (`feedback_loop.dropped`: `refusedDuringShutdown`); a use the
/// registry refuses — each one counted in `Statistics.refused` — gets a `get-or-create` span with
/// `feedback_loop.refused` set to the error's code and the error recorded. Both are children of
/// the caller's span. On every backend.
@Suite(.timeLimit(.minutes(5)))
struct RefusalSpanTests {
    typealias Registry = LoopRegistry<String, Jobs.State, Jobs.Event>

    @Test(arguments: Backend.allCases)
    func aServiceShuttingDownTracesTheEventsItRefuses(backend: Backend) async throws {
        let tracer = InMemoryTracer()
        let service = LoopService(loop: Self.loop(backend, tracer: tracer), clock: ManualClock(), logger: .quiet)
        let request = tracer.startSpan("request")
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await service.run() }
                trigger.triggerGracefulShutdown()
                await service.waitUntilShuttingDown()
                await ServiceContext.$current.withValue(request.context) {
                    #expect(service.send(.add(1)) == false)
                    await #expect(throws: LoopServiceError.notAcceptingEvents) { try await service.sendAndWait(.startQuick) }
                }
                try await group.waitForAll()
            }
        }
        request.end()

        #expect(service.eventsRefused == 2)
        let spans = tracer.finishedSpans
        let requestSpan = try #require(spans.first { $0.spanID == request.spanID })
        let refused = spans.children(of: requestSpan)
        #expect(refused.summaries == ["reduce add dropped: refusedDuringShutdown", "reduce startQuick dropped: refusedDuringShutdown"])
        #expect(refused.allSatisfy { $0.string("feedback_loop.label") == "jobs" })
    }

    /// Past the cap, through each way in (`sendAndWait`, `send`, `withLoop`); a use that asked
    /// not to create finds no loop, which is an answer rather than a refusal: no span.
    @Test(arguments: Backend.allCases)
    func aRegistryAtItsCapTracesTheUsesItRefuses(backend: Backend) async throws {
        let tracer = InMemoryTracer()
        var configuration = Registry.Configuration(maximumLoops: 1, logger: .quiet)
        configuration.tracing = LoopTracing(tracer: tracer)
        let registry = Registry(
            configuration: configuration, clock: ManualClock(), makeLoop: { _ in Self.loop(backend, tracer: tracer) })
        try await registry.sendAndWait(.add(1), to: "a")

        let request = tracer.startSpan("request")
        try await ServiceContext.$current.withValue(request.context) { () async throws in
            await #expect(throws: LoopRegistryError.tooManyLoops) { try await registry.sendAndWait(.add(2), to: "b") }
            await #expect(throws: LoopRegistryError.tooManyLoops) { try await registry.send(.add(2), to: "b") }
            await #expect(throws: LoopRegistryError.tooManyLoops) { try await registry.withLoop(for: "b") { _ in } }
            await #expect(throws: LoopRegistryError.noSuchLoop) {
                try await registry.withLoop(for: "b", creatingIfAbsent: false) { _ in }
            }
            #expect(try await registry.sendAndWait(.add(2), to: "a").total == 3, "a is untouched")
        }
        request.end()
        _ = await registry.remove("a")

        #expect(registry.statistics.refused == 3)
        let spans = tracer.finishedSpans
        let requestSpan = try #require(spans.first { $0.spanID == request.spanID })
        let refused = spans.children(of: requestSpan).filter { $0.operationName != "reduce" }
        #expect(refused.count == 3)
        for span in refused {
            #expect(span.operationName == "get-or-create")
            #expect(span.string("feedback_loop.refused") == "tooManyLoops")
            #expect(span.errors.map { $0.error as? LoopRegistryError } == [.tooManyLoops])
            #expect(span.status?.code == .error)
        }
        #expect(spans.children(of: requestSpan).summaries.filter { $0.hasPrefix("reduce") } == ["reduce add"])
    }

    /// During shutdown the registry refuses new loops, and the loops it drains refuse events: each
    /// refusal is in its caller's trace, with its own reason.
    @Test(arguments: Backend.allCases)
    func aRegistryShuttingDownTracesTheUsesItRefuses(backend: Backend) async throws {
        let tracer = InMemoryTracer()
        let probe = Jobs.Probe()
        var configuration = Registry.Configuration(gracePeriod: .seconds(60), logger: .quiet)
        configuration.tracing = LoopTracing(tracer: tracer)
        let registry = Registry(
            configuration: configuration, clock: ManualClock(),
            makeLoop: { _ in Self.loop(backend, tracer: tracer, feedbacks: probe.feedbacks) })
        let requests = (newLoop: tracer.startSpan("request for a new loop"), event: tracer.startSpan("request for a"))

        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await registry.run() }
                // A quick job keeps a draining until the test lets it finish.
                #expect(try await registry.send(.startQuick, to: "a"))
                await probe.quickStarted.wait()
                trigger.triggerGracefulShutdown()
                await registry.waitUntilShuttingDown()
                let a = try #require(registry.existing("a"))
                await a.waitUntilShuttingDown()

                await ServiceContext.$current.withValue(requests.newLoop.context) {
                    await #expect(throws: LoopRegistryError.shuttingDown) { try await registry.sendAndWait(.add(1), to: "b") }
                }
                await ServiceContext.$current.withValue(requests.event.context) {
                    await #expect(throws: LoopServiceError.notAcceptingEvents) { try await a.sendAndWait(.add(1)) }
                }
                probe.releaseQuick.open()
                try await group.waitForAll()
            }
        }
        requests.newLoop.end()
        requests.event.end()

        #expect(registry.statistics.refused == 1)
        let spans = tracer.finishedSpans
        let newLoop = try #require(spans.first { $0.spanID == requests.newLoop.spanID })
        let refusedLoop = try spans.child(of: newLoop, named: "get-or-create")
        #expect(refusedLoop.string("feedback_loop.refused") == "shuttingDown")
        #expect(refusedLoop.errors.map { $0.error as? LoopRegistryError } == [.shuttingDown])
        #expect(refusedLoop.status?.code == .error)
        let event = try #require(spans.first { $0.spanID == requests.event.spanID })
        #expect(spans.children(of: event).summaries == ["reduce add dropped: refusedDuringShutdown"])
    }

    /// Shutdown begins while `makeLoop` runs for a first use: the loop made is stopped unused, and
    /// the use is refused as any use during shutdown, in its caller's trace.
    @Test(arguments: Backend.allCases)
    func aRegistryThatBeganShuttingDownWhileMakingALoopTracesTheRefusal(backend: Backend) async throws {
        let tracer = InMemoryTracer()
        let whileMaking = Lock<(@Sendable () -> Void)?>(nil)
        var configuration = Registry.Configuration(logger: .quiet)
        configuration.tracing = LoopTracing(tracer: tracer)
        let registry = Registry(
            configuration: configuration, clock: ManualClock(),
            makeLoop: { _ in
                whileMaking.withLock { $0.take() }?()
                return Self.loop(backend, tracer: tracer)
            })
        let request = tracer.startSpan("request")

        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await registry.run() }
                // Once the registry runs a's service, its run() is inside the shutdown handler that
                // closes it, which a trigger then calls at once: a's service sees its loop stopped
                // only when the registry runs it.
                let a = try await registry.withLoop(for: "a") { $0.service }
                await a.loop.stop()
                await a.waitUntilShuttingDown()
                whileMaking.withLock { $0 = { trigger.triggerGracefulShutdown() } }
                await ServiceContext.$current.withValue(request.context) {
                    await #expect(throws: LoopRegistryError.shuttingDown) { try await registry.sendAndWait(.add(1), to: "b") }
                }
                try await group.waitForAll()
            }
        }
        request.end()

        #expect(registry.statistics.refused == 1)
        #expect(registry.statistics.created == 1, "b's loop was made but never installed")
        let spans = tracer.finishedSpans
        let requestSpan = try #require(spans.first { $0.spanID == request.spanID })
        let refused = try spans.child(of: requestSpan, named: "get-or-create")
        #expect(refused.string("feedback_loop.refused") == "shuttingDown")
        #expect(refused.errors.map { $0.error as? LoopRegistryError } == [.shuttingDown])
    }

    static func loop(
        _ backend: Backend, tracer: InMemoryTracer, feedbacks: [Feedback<Jobs.State, Jobs.Event>] = []
    ) -> Loop<Jobs.State, Jobs.Event> {
        Loop(
            initial: Jobs.State(), reduce: Jobs.reduce, feedbacks: feedbacks, backend: backend,
            configuration: LoopConfiguration(
                label: "jobs", logger: .quiet, onEffectError: { _ in }, instruments: [LoopTracing(tracer: tracer)]))
    }
}
