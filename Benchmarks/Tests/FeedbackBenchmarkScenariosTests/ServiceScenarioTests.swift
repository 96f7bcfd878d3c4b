import FeedbackLoop
import Testing

@testable import FeedbackBenchmarkScenarios
@testable import feedback_bench

/// The `service` scenario (issue 27): its sizes, its checks on every kind of unit, its flags, and
/// the report's flag for a figure below its limit. The scenario's run at a tiny size on every
/// backend is ``ScenarioRunTests``'.
@Suite(.serialized) struct ServiceScenarioTests {
    @Test func populationsFollowTheSizeAndLoops() throws {
        let medium = ServiceScenario(size: BenchmarkSize(preset: .medium))
        #expect(medium.populations == [1_000, 100_000])
        #expect(medium.openLoops == 10_000)
        #expect(medium.closedEvents(loops: 1_000) == 50_000)
        #expect(medium.closedEvents(loops: 100_000) == 100_000)
        #expect(medium.openEvents(rate: 1_000_000) == 200_000)
        let fewer = ServiceScenario(size: BenchmarkSize(preset: .medium), maxLoops: 500)
        #expect(fewer.populations == [500])
        #expect(fewer.openLoops == 500)
        let more = ServiceScenario(size: BenchmarkSize(preset: .medium), maxLoops: 1_000_000)
        #expect(more.populations == [1_000, 1_000_000])
        #expect(more.openLoops == 10_000)
        let tiny = ServiceScenario(size: try BenchmarkSize(events: 1_000))
        #expect(tiny.populations == [10, 1_000])
        #expect(tiny.openLoops == 100)
    }

    /// Every kind of unit the scenario sends into — a backend's loops, and each hand-written
    /// version — passes its check when every event arrived and fails it when one is missing.
    @Test(arguments: [Backend?.none] + Backend.allCases.map(Optional.some))
    func unitsPassTheirCheckOnlyWhenEveryEventWasReducedAndObserved(backend: Backend?) async throws {
        func check<Units: ServiceUnits>(_: Units.Type, _ backend: Backend, missing: Bool = true) async throws {
            _ = try await ServiceScenario.closedLoop(Units.self, backend: backend, loops: 2, events: 5)
            guard missing else { return }
            // 3 events round robin over 2 units (2 and 1), checked as if unit 1 had been sent 2.
            let units = await Units(backend: backend, count: 2) { _, _ in }
            for index in 0..<3 { units.send(to: index % 2) }
            await #expect(throws: ScenarioFailure.self) {
                try await units.finish("service test") { _ in 2 }
            }
        }
        if let backend {
            try await check(LoopUnits.self, backend)
        } else {
            try await check(InPlaceUnits.self, .callback)
            try await check(ParkedUnits.self, .callback)
            // Its events are tasks that may not have entered the actor when it is checked, so
            // only the closed loop, whose sender waits for each, is run on it.
            try await check(ActorUnits.self, .callback, missing: false)
        }
    }

    @Test func theOpenLoopRecordsEveryEventOnEveryKindOfUnit() async throws {
        for backend in Backend.allCases {
            let rows = try await ServiceScenario.openLoop(LoopUnits.self, backend: backend, loops: 7, rate: 100_000, events: 50)
            #expect(rows.map(\.0) == ["p50 µs", "p99 µs", "achieved kevents/s"])
            #expect(rows.allSatisfy { $0.2 > 0 })
        }
        _ = try await ServiceScenario.openLoop(InPlaceUnits.self, backend: .callback, loops: 7, rate: 100_000, events: 50)
        _ = try await ServiceScenario.openLoop(ParkedUnits.self, backend: .callback, loops: 7, rate: 100_000, events: 50)
    }

    /// The runner's population is public API: out of range, it is a clear error before anything
    /// runs, not a division by zero.
    @Test(arguments: [0, -1, ScalingScenario.maximumLoops + 1])
    func aPopulationOutOfRangeIsAClearError(loops: Int) async throws {
        var runner = BenchmarkRunner(size: try BenchmarkSize(events: 1_000), backends: [.callback], scenarios: [.service])
        runner.serviceLoops = loops
        await #expect(throws: ScenarioFailure("service: the most live loops must be between 1 and 1000000, not \(loops)")) {
            try await runner.run(.service)
        }
    }

    @Test func loopsSetsTheServicePopulation() throws {
        let command = try #require(
            try FeedbackBench.parseAsRoot(["--scenario", "service", "--loops", "5000"]) as? FeedbackBench)
        let options = try command.options()
        #expect(options.scenarios == [.service])
        #expect(options.serviceLoops == 5_000)
        let defaults = try #require(try FeedbackBench.parseAsRoot(["--scenario", "service"]) as? FeedbackBench)
        #expect(try defaults.options().serviceLoops == nil)
    }

    @Test(arguments: [
        (["--scenario", "service", "--loops", "0"], "--loops must be between 1 and 1000000, not 0"),
        (["--scenario", "service", "--loops", "-7"], "--loops must be between 1 and 1000000, not -7"),
        (["--scenario", "service", "--loops", "1000001"], "--loops must be between 1 and 1000000, not 1000001"),
        (["--scenario", "service", "--loops", "many"], "many"),
        (["--scenario", "latency", "--loops", "10"], "--loops only goes with --scenario scaling or --scenario service"),
        (["--loops", "10"], "--loops only goes with --scenario scaling or --scenario service"),
        (["--instructions", "--workload", "service-actor", "--backend", "actor"], "workload service-actor is a bare limit: run it with --bare"),
        (["--instructions", "--workload", "service", "--backend", "opencombine"], "opencombine does not run workload service"),
    ])
    func badServiceFlagsAreUsageErrors(arguments: [String], message: String) {
        do {
            _ = try FeedbackBench.parseAsRoot(arguments)
            Issue.record("\(arguments) parsed")
        } catch {
            #expect(FeedbackBench.exitCode(for: error).rawValue == 64)
            #expect(FeedbackBench.message(for: error).contains(message), "\(FeedbackBench.message(for: error))")
        }
    }

    @Test(arguments: [
        (["--scenario", "service", "--backend", "stream"], Workload.service, Contender.backend(.stream)),
        (["--workload", "service", "--bare"], .service, .bare),
        (["--workload", "service-actor", "--bare"], .serviceActor, .bare),
    ])
    func serviceInstructionsNameTheirWorkload(arguments: [String], workload: Workload, contender: Contender) throws {
        let command = try #require(try FeedbackBench.parseAsRoot(["--instructions"] + arguments) as? FeedbackBench)
        let options = try command.options()
        #expect(options.workload == workload)
        #expect(options.contender == contender)
    }
}
