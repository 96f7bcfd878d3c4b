import FeedbackLoop
import FeedbackLoopServices
import MetricsTestKit
import ServiceLifecycleTestKit
import Synchronization
import Testing

/// Logs and metrics are wired once, in the loop's configuration; the service finds them there.
@Suite(.timeLimit(.minutes(5)))
struct LoopServiceConfigurationTests {
    @Test("the service logs and counts where the loop's configuration says", arguments: Backend.allCases)
    func usesTheLoopsLoggerAndMetrics(backend: Backend) async throws {
        let testMetrics = TestMetrics()
        let lines = Lines()
        var logger = Logger(label: "jobs") { _ in LineHandler(lines: lines) }
        logger.logLevel = .info
        let loop = Loop(
            initial: Jobs.State(), reduce: Jobs.reduce, feedbacks: Jobs.Probe().feedbacks, backend: backend,
            configuration: LoopConfiguration(
                label: "jobs", logger: logger, instruments: [LoopMetrics(label: "jobs", factory: testMetrics)]))
        let service = LoopService(loop: loop, gracePeriod: .seconds(5), clock: ManualClock())

        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await service.run() }
                #expect(try await service.sendAndWait(.add(2)).total == 2)
                trigger.triggerGracefulShutdown()
                await service.waitUntilShuttingDown()
                #expect(service.send(.add(1)) == false)
                try await group.waitForAll()
            }
        }

        // The loop's own figures and the service's refusals land in the same metrics.
        #expect(try testMetrics.expectCounter("jobs_events_reduced_total").totalValue == 1)
        #expect(
            try testMetrics.expectCounter(
                "jobs_events_dropped_total", [("reason", LoopMetrics.refusedDuringShutdownReason)]
            ).totalValue == 1)
        // The service's lines went to the loop's logger.
        #expect(lines.messages.contains("loop service stopped"))
        #expect(lines.messages.contains("refusing events: the loop service is shutting down"))
    }
}

private final class Lines: Sendable {
    let storage = Lock<[String]>([])
    var messages: [String] { storage.withLock { $0 } }
}

private struct LineHandler: LogHandler {
    let lines: Lines
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.storage.withLock { $0.append("\(event.message)") }
    }
}
