import FeedbackLoop
import FeedbackLoopServices
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

/// A service's task-local context, as swift-distributed-tracing's `ServiceContext` would be.
private enum Request {
    @TaskLocal static var id: String?
}

/// A `stream` loop with `hosting: .run` lives inside the `LoopService` that runs it: its effects
/// are child tasks of the service's `run()`, so what the service's task binds reaches them, and the
/// service's graceful shutdown drains them as on every backend.
@Suite(.timeLimit(.minutes(5)))
struct LoopServiceHostingTests {
    @Test("a loop hosted by its service: the service's task-locals reach every effect", arguments: Backend.allCases)
    func theServiceHostsTheLoopsTaskTree(backend: Backend) async throws {
        let seen = Delivery<String>()
        let loop = Loop(
            initial: 0,
            reduce: { (state: inout Int, event: Int) in state = event },
            feedbacks: [
                .skippingRepeated({ $0 }) { _ in
                    .run { _ in seen.deliver(Request.id ?? "none") }
                },
            ],
            backend: backend,
            configuration: LoopConfiguration(hosting: .run))
        let reports = Delivery<LoopShutdownReport<Int>>()
        let service = LoopService(loop: loop, gracePeriod: .seconds(60), logger: .quiet, onShutdown: reports.deliver)

        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await Request.$id.withValue("service") { try await service.run() } }
                for value in 1...3 { _ = try await service.sendAndWait(value) }
                await seen.waitForCount(4)
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }

        switch backend {
        case .stream:
            #expect(seen.values == Array(repeating: "service", count: 4))
        case .callback, .actor:
            #expect(seen.values == Array(repeating: "none", count: 4))
        }
        let report = try #require(reports.values.first)
        #expect(report.ending == .drained)
        #expect(report.statistics.eventsReduced == 3)
        #expect(report.statistics.effectsRunning == 0)
    }
}
