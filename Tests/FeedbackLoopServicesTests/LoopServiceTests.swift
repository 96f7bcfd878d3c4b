import FeedbackLoop
import FeedbackLoopServices
import Logging
import MetricsTestKit
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

/// Every wait below is on a continuation; the time limit only turns a lost wake-up into a failure.
@Suite(.timeLimit(.minutes(5)))
struct LoopServiceTests {
    typealias Report = LoopShutdownReport<Jobs.State>

    @Test("graceful shutdown refuses new events and lets in-flight effects finish", arguments: Backend.allCases)
    func drainsInFlightEffects(backend: Backend) async throws {
        let probe = Jobs.Probe()
        let clock = ManualClock()
        let reports = Delivery<Report>()
        let testMetrics = TestMetrics()
        let service = LoopService(
            loop: Jobs.loop(probe, backend: backend), gracePeriod: .seconds(30), clock: clock,
            logger: .quiet, metrics: LoopMetrics(label: "jobs", factory: testMetrics), onShutdown: reports.deliver)

        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await service.run() }
                #expect(try await service.sendAndWait(.add(2)).total == 2)
                #expect(service.send(.startQuick))
                await probe.quickStarted.wait()

                trigger.triggerGracefulShutdown()
                await service.waitUntilShuttingDown()
                #expect(!service.isAcceptingEvents)
                #expect(service.send(.add(100)) == false)
                await #expect(throws: LoopServiceError.notAcceptingEvents) {
                    try await service.sendAndWait(.add(1000))
                }
                #expect(reports.values.isEmpty, "the service must wait for the quick job")

                probe.releaseQuick.open()
                try await group.waitForAll()
            }
        }

        let report = try #require(reports.values.only)
        #expect(report.ending == .drained)
        #expect(report.finalState == Jobs.State(total: 2, quickRequested: true, quickDone: true))
        #expect(report.eventsRefused == 2)
        #expect(service.eventsRefused == 2)
        #expect(report.statistics.eventsReduced == 3)
        #expect(report.statistics.eventsDroppedAfterStop == 0)
        #expect(report.statistics.effectsFinished == 1)
        #expect(report.statistics.effectsCancelled == 0)
        #expect(clock.now == ManualClock.Instant(offset: .zero), "no grace period was needed")
        let refused = try testMetrics.expectCounter(
            "jobs_events_dropped_total", [("reason", LoopMetrics.refusedDuringShutdownReason)])
        #expect(refused.totalValue == 2)
    }

    @Test("effects still running when the grace period ends are cancelled", arguments: Backend.allCases)
    func cancelsWhatOutlivesTheGracePeriod(backend: Backend) async throws {
        let probe = Jobs.Probe()
        let clock = ManualClock()
        let reports = Delivery<Report>()
        let effects = EffectLog()
        let loop = Jobs.loop(probe, backend: backend, instrumentation: effects.instrumentation())
        let service = LoopService(loop: loop, gracePeriod: .seconds(5), clock: clock, logger: .quiet, onShutdown: reports.deliver)

        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await service.run() }
                service.send(.startQuick)
                service.send(.startStuck)
                await probe.quickStarted.wait()
                await probe.stuckStarted.wait()

                trigger.triggerGracefulShutdown()
                await clock.waitForSleeper()
                #expect(clock.pendingDeadlines == [ManualClock.Instant(offset: .seconds(5))])

                // During the grace period the loop still reduces its own effects' events.
                probe.releaseQuick.open()
                await effects.waitUntilFinished(feedback: 0)
                _ = await loop.states.first { $0.quickDone }
                #expect(!probe.stuckCancelled.isOpen)
                #expect(reports.values.isEmpty)

                clock.advance(by: .seconds(5))
                try await group.waitForAll()
            }
        }

        let report = try #require(reports.values.only)
        #expect(report.ending == .gracePeriodExpired)
        #expect(probe.stuckCancelled.isOpen)
        #expect(report.finalState.quickDone)
        #expect(report.statistics.eventsReduced == 3)
        #expect(report.statistics.effectsStarted == 2)
        #expect(report.statistics.effectsFinished == 1)
        #expect(report.statistics.effectsCancelled == 1)
        #expect(report.statistics.effectsRunning == 0)
        #expect(report.eventsRefused == 0)
    }

    @Test("a zero grace period cancels running effects at once", arguments: Backend.allCases)
    func zeroGracePeriod(backend: Backend) async throws {
        let probe = Jobs.Probe()
        let reports = Delivery<Report>()
        let service = LoopService(
            loop: Jobs.loop(probe, backend: backend), gracePeriod: .zero, clock: ManualClock(),
            logger: .quiet, onShutdown: reports.deliver)

        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await service.run() }
                #expect(try await service.sendAndWait(.add(7)).total == 7)
                service.send(.startStuck)
                await probe.stuckStarted.wait()
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }

        let report = try #require(reports.values.only)
        #expect(report.ending == .gracePeriodExpired)
        #expect(report.finalState.total == 7)
        #expect(report.statistics.effectsCancelled == 1)
        #expect(probe.stuckCancelled.isOpen)
    }

    @Test("runs under a ServiceGroup and loses no accepted event", arguments: Backend.allCases)
    func serviceGroup(backend: Backend) async throws {
        let probe = Jobs.Probe()
        let reports = Delivery<Report>()
        let loop = Jobs.loop(probe, backend: backend)
        let service = LoopService(loop: loop, gracePeriod: .seconds(60), logger: .quiet, onShutdown: reports.deliver)
        let group = ServiceGroup(services: [service], logger: .quiet)

        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try await withThrowingTaskGroup(of: Void.self) { senders in
                for n in 1...100 {
                    senders.addTask { try await service.sendAndWait(.add(n)) }
                }
                try await senders.waitForAll()
            }
            service.send(.startQuick)
            await probe.quickStarted.wait()
            await group.triggerGracefulShutdown()
            probe.releaseQuick.open()
            try await tasks.waitForAll()
        }

        let report = try #require(reports.values.only)
        #expect(report.ending == .drained)
        #expect(report.finalState == Jobs.State(total: 5050, quickRequested: true, quickDone: true))
        #expect(report.statistics.effectsCancelled == 0)
        #expect(service.send(.add(1)) == false)
        #expect(service.eventsRefused == 1)
    }

    @Test("cancelling run() stops the loop at once, without a grace period", arguments: Backend.allCases)
    func cancellation(backend: Backend) async throws {
        let probe = Jobs.Probe()
        let clock = ManualClock()
        let reports = Delivery<Report>()
        let service = LoopService(
            loop: Jobs.loop(probe, backend: backend), gracePeriod: .seconds(60), clock: clock,
            logger: .quiet, onShutdown: reports.deliver)

        let running = Task { try await service.run() }
        service.send(.startStuck)
        await probe.stuckStarted.wait()
        running.cancel()
        try await running.value

        let report = try #require(reports.values.only)
        #expect(report.ending == .cancelled)
        #expect(report.statistics.effectsCancelled == 1)
        #expect(probe.stuckCancelled.isOpen)
        #expect(clock.pendingDeadlines.isEmpty)
        #expect(!service.isAcceptingEvents)
    }

    @Test("stopping the loop by other means ends the service", arguments: Backend.allCases)
    func loopStoppedElsewhere(backend: Backend) async throws {
        let probe = Jobs.Probe()
        let reports = Delivery<Report>()
        let service = LoopService(loop: Jobs.loop(probe, backend: backend), logger: .quiet, onShutdown: reports.deliver)

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            try await service.sendAndWait(.add(3))
            await service.loop.stop()
            try await group.waitForAll()
        }

        let report = try #require(reports.values.only)
        #expect(report.ending == .loopStopped)
        #expect(report.finalState.total == 3)
        #expect(service.send(.add(1)) == false)
        #expect(service.eventsRefused == 1)
    }

    @Test("a service runs its loop once", arguments: Backend.allCases)
    func runTwice(backend: Backend) async throws {
        let reports = Delivery<Report>()
        let service = LoopService(loop: Jobs.loop(Jobs.Probe(), backend: backend), logger: .quiet, onShutdown: reports.deliver)

        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await service.run() }
                group.addTask { try await service.run() }
                // Whichever call came second fails at once; the other runs until shutdown.
                await #expect(throws: LoopServiceError.alreadyRun) { try await group.next() }
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
        #expect(reports.values.count == 1)
    }
}

extension Array {
    /// The single element, or `nil` if there are none or several.
    var only: Element? { count == 1 ? first : nil }
}
