import FeedbackLoop
import Testing

@testable import FeedbackBenchmarkScenarios

/// Every scenario runs to the end at a tiny size on each backend, passes its own checks and fills
/// in a figure for the backend on every row. Serialized: the scenarios spin on dedicated threads
/// and time themselves, so running them side by side would only starve each other.
@Suite(.serialized) struct ScenarioRunTests {
    static let tiny = try! BenchmarkSize(events: 1_000)

    @Test(arguments: Scenario.allCases, Backend.allCases)
    func scenarioPassesItsChecksAndReportsEveryRow(scenario: Scenario, backend: Backend) async throws {
        var runner = BenchmarkRunner(size: Self.tiny, backends: [backend], scenarios: [scenario])
        runner.scalingLoops = 100
        let report = try await runner.run(scenario)
        #expect(report.scenario == scenario)
        #expect(!report.rows.isEmpty)
        for row in report.rows {
            // A reference row of the limit's alone (`service`'s hand-written hand-off).
            if row.values.isEmpty, let limit = row.limit {
                #expect(limit > 0, "\(row.label) \(row.metric)")
                continue
            }
            let value = try #require(row.values[backend.rawValue], "\(row.label) \(row.metric) has no \(backend) figure")
            #expect(value.isFinite)
            // Memory figures come from the process's RSS, which other tests running in parallel
            // move both ways: only timings must be positive here.
            let fromRSS = row.metric.hasPrefix("RSS") || row.metric.hasPrefix("bytes")
            if row.better != .exact && !fromRSS { #expect(value > 0, "\(row.label) \(row.metric)") }
        }
        let leaked = report.rows.filter { $0.metric == "effects leaked" }.compactMap { $0.values[backend.rawValue] }
        #expect(leaked.allSatisfy { $0 == 0 })
    }

    @Test(arguments: Workload.allCases, Backend.allCases)
    func workloadRunsCheckedOnEachBackendAndBare(workload: Workload, backend: Backend) async throws {
        if workload.runs(on: backend) {
            try await workload.run(backend, units: 200)
        } else {
            await #expect(throws: ScenarioFailure.self) { try await workload.run(backend, units: 200) }
        }
        if workload.runsBare {
            try await workload.run(nil, units: 200)
        } else {
            await #expect(throws: ScenarioFailure.self) { try await workload.run(nil, units: 200) }
        }
        if workload.hasPeer {
            try await workload.run(.peer, units: 200)
        } else {
            await #expect(throws: ScenarioFailure.self) { try await workload.run(.peer, units: 200) }
        }
    }

    /// The peer fills its column wherever it runs: every row of the scenarios it takes part in,
    /// except the cancellation parts its design has no counterpart for.
    @Test(arguments: Scenario.allCases)
    func thePeerReportsBesideTheBackends(scenario: Scenario) async throws {
        var runner = BenchmarkRunner(size: Self.tiny, backends: [.callback], scenarios: [scenario], peer: true)
        runner.scalingLoops = 10
        let report = try await runner.run()
        // The `system` operator has no composition of features to compare, no journal and no
        // wake-up, and scaling runs no peer.
        let peerRuns = !BenchmarkRunner.withoutPeer.contains(scenario)
        #expect(report.backends == (peerRuns ? ["callback", "opencombine"] : ["callback"]))
        #expect(report.failures.isEmpty)
        let rows = report.scenarios[0].rows
        let withPeer = rows.filter { $0.values["opencombine"] != nil }
        switch scenario {
        case .scaling, .composition, .durable, .service:
            #expect(withPeer.isEmpty)
        case .cancellation:
            #expect(withPeer.allSatisfy { $0.label.hasPrefix("switch-latest") })
            #expect(withPeer.count == 5)
        default:
            #expect(withPeer.count == rows.count)
        }
        for row in withPeer where row.better != .exact && !row.metric.hasPrefix("bytes") {
            #expect(try #require(row.values["opencombine"]) > 0)
            #expect(row.ratio("opencombine") != nil)
        }
    }

    @Test func reportRendersInEveryFormat() async throws {
        let runner = BenchmarkRunner(size: Self.tiny, scenarios: [.pingpong])
        let report = try await runner.run()
        let table = try ReportFormat.table.render(report)
        #expect(table.contains("| 200 cycles | ns/cycle |"))
        #expect(Backend.allCases.allSatisfy { table.contains($0.rawValue) })
        let csv = try ReportFormat.csv.render(report)
        let backendColumns = Backend.allCases.map { "\($0),\($0)_ratio" }.joined(separator: ",")
        #expect(csv.hasPrefix("scenario,case,metric,better,limit,\(backendColumns)\n"))
        #expect(csv.split(separator: "\n").count == 2)
        let json = try ReportFormat.json.render(report)
        #expect(json.contains("\"scenario\" : \"pingpong\""))
    }

    @Test func sizesRejectNonPositiveEventCounts() {
        #expect(throws: ScenarioFailure.self) { try BenchmarkSize(events: 0) }
        #expect(throws: ScenarioFailure.self) { try BenchmarkSize(events: -3) }
        #expect(BenchmarkSize(preset: .medium).idleLoops == 100_000)
        #expect(BenchmarkSize(preset: .medium).backgroundLoops == 1_000)
        #expect(BenchmarkSize(preset: .medium).inFlightAtStop == 10_000)
    }
}
