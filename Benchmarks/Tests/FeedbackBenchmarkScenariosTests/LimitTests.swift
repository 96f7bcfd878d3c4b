import FeedbackLoop
import Testing

@testable import FeedbackBenchmarkScenarios

/// Limits are floors (issue 27): the report flags a figure below its limit, the throughput limit's
/// combining and consumer queues are correct serialisations, and composition's bound is taken
/// against the same children without composition.
@Suite(.serialized) struct LimitTests {
    /// A figure better than its limit by more than the margin is flagged in the report; one within
    /// the margin, a tail percentile, a maximum, or a row without a limit is not.
    @Test func aFigureBelowItsLimitIsFlagged() throws {
        let report = ScenarioReport(
            scenario: .throughput, limit: "bare",
            rows: [
                Measurement(label: "4 senders", metric: "ns/event", better: .lower, limit: 40, values: ["callback": 36, "actor": 50]),
                Measurement(label: "4 senders", metric: "Mevents/s", better: .higher, limit: 25, values: ["callback": 27.7, "actor": 24.9]),
                Measurement(label: "10k", metric: "max µs", better: .lower, limit: 50, values: ["callback": 10]),
                Measurement(label: "10k", metric: "p99 µs", better: .lower, limit: 50, values: ["callback": 10]),
                Measurement(label: "10k", metric: "p50 µs", better: .lower, limit: 5, values: ["actor": 1]),
                Measurement(label: "10k", metric: "achieved kevents/s", better: .higher, limit: 10, values: ["callback": 10.05]),
                Measurement(label: "10k", metric: "× parked task", better: .lower, values: ["callback": 0.01]),
            ])
        #expect(report.beatenLimits.map { "\($0.column) \($0.metric)" } == ["callback ns/event", "callback Mevents/s", "actor p50 µs"])
        let whole = BenchmarkReport(
            date: "2026-11-27T00:00:00Z", processors: 2, size: BenchmarkSize(preset: .small), backends: ["callback", "actor"],
            scenarios: [report])
        let table = try ReportFormat.table.render(whole)
        #expect(table.contains("**BELOW ITS LIMIT** callback: 4 senders, ns/event at 0.9× the limit"))
        #expect(!table.contains("max µs at"))
    }

    /// The throughput limit's combining queue reduces every event exactly once however the senders
    /// interleave, its drainer taking each batch at once or after a pause.
    @Test(arguments: [1, 2, 4, 8], [0, 2_000] as [UInt64])
    func theCombiningLimitReducesEveryEvent(senders: Int, pause: UInt64) async {
        let reducer = CombiningReducer(reduce: Systems.add, pause: pause)
        await onDedicatedThreads(senders) { _ in
            for _ in 0..<20_000 { reducer.send(1) }
        }
        #expect(reducer.state == senders * 20_000)
        #expect(await ThroughputScenario.combining(events: 20_001, senders: senders, pause: pause) > 0)
    }

    /// The throughput limit's consumer-thread queue reduces every event exactly once, the
    /// consumer parking and being woken however the senders interleave.
    @Test(arguments: [1, 2, 4, 8])
    func theConsumerLimitReducesEveryEvent(senders: Int) async {
        let reducer = ConsumerReducer(reduce: Systems.add)
        await onDedicatedThreads(senders + 1) { thread in
            if thread == senders {
                reducer.consume(events: senders * 20_000)
            } else {
                for _ in 0..<20_000 { reducer.send(1) }
            }
        }
        #expect(reducer.state == senders * 20_000)
        #expect(await ThroughputScenario.consumer(events: 20_001, senders: senders) > 0)
    }

    /// Composition's bound is reported against the same children in a plain array, and the ratio
    /// to the child's own loop stays as information.
    @Test func compositionReportsItsBoundAgainstThePlainArray() async throws {
        let report = try await BenchmarkRunner(size: try BenchmarkSize(events: 1_000), backends: [.callback], scenarios: [.composition])
            .run(.composition)
        let bound = try #require(report.rows.first { $0.label.contains("keyed children / plain array (at most 3)") })
        let composed = try #require(report.rows.first { $0.label.hasPrefix("1000 keyed children, 1 changes") })
        let plain = try #require(report.rows.first { $0.label.hasPrefix("plain array of 1000 children") })
        let ratio = try #require(bound.values["callback"])
        #expect(abs(ratio - composed.values["callback"]! / plain.values["callback"]!) < 1e-9)
        #expect(report.rows.contains { $0.label.contains("1 child loop (information)") })
    }
}
