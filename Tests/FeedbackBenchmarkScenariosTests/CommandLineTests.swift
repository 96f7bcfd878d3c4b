import ArgumentParser
import FeedbackBenchmarkScenarios
import FeedbackLoop
import Testing

@testable import feedback_bench

/// Bad flags are usage errors (exit 64) with a message that names the problem; good ones parse.
@Suite struct CommandLineTests {
    @Test(arguments: [
        (["--backend", "fiber"], "unknown backend 'fiber'"),
        (["--scenario", "warp"], "unknown scenario 'warp'"),
        (["--events", "0"], "--events must be a positive number"),
        (["--events=-5"], "--events must be a positive number"),
        (["--events", "-5"], "--events must be a positive number, not -5"),
        (["--events", "92233720368548"], "more than the maximum of 100000000"),
        (["--events", "999999999999"], "more than the maximum of 100000000"),
        (["--events", "9223372036854775807"], "more than the maximum of 100000000"),
        (["--render", "r.json", "--events", "10"], "--events and --size do not apply"),
        (["--render", "r.json", "--size", "small"], "--events and --size do not apply"),
        (["--output", "/nonexistent-directory/report.txt"], "the directory /nonexistent-directory does not exist"),
        (["--output", "/"], "it is a directory"),
        (["--events", "lots"], "lots"),
        (["--size", "huge"], "unknown size 'huge'"),
        (["--format", "xml"], "unknown format 'xml'"),
        (["--events", "10", "--size", "small"], "either --events or --size"),
        (["--bare"], "--bare only goes with --instructions"),
        (["--instructions"], "exactly one --scenario"),
        (["--instructions", "--scenario", "latency", "--backend", "actor"], "exactly one --scenario"),
        (["--instructions", "--scenario", "throughput"], "one --backend"),
        (["--output", ""], "--output needs a file name (or - for standard output)"),
        (["--frobnicate"], "frobnicate"),
        (["--render", ""], "--render needs a file name"),
        (["--render", "r.json", "--instructions", "--scenario", "pingpong", "--bare"], "exclude each other"),
    ])
    func badInputIsAUsageError(arguments: [String], message: String) {
        do {
            _ = try FeedbackBench.parseAsRoot(arguments)
            Issue.record("\(arguments) parsed")
        } catch {
            #expect(FeedbackBench.exitCode(for: error) == .validationFailure)
            #expect(FeedbackBench.exitCode(for: error).rawValue == 64)
            #expect(FeedbackBench.message(for: error).contains(message), "\(FeedbackBench.message(for: error))")
        }
    }

    @Test func defaultsRunEverythingEverywhereAtMediumSize() throws {
        let command = try #require(try FeedbackBench.parseAsRoot([]) as? FeedbackBench)
        let options = try command.options()
        #expect(options.backends == Backend.allCases)
        #expect(options.scenarios == Scenario.allCases)
        #expect(options.size == BenchmarkSize(preset: .medium))
        #expect(options.format == .table)
        #expect(options.workload == nil)
    }

    @Test func flagsSelectBackendScenariosSizeAndWorkload() throws {
        let command = try #require(
            try FeedbackBench.parseAsRoot([
                "--backend", "actor", "--scenario", "cancellation", "--events", "5000", "--format", "csv", "--instructions",
            ]) as? FeedbackBench)
        let options = try command.options()
        #expect(options.backends == [.actor])
        #expect(options.scenarios == [.cancellation])
        #expect(options.size.events == 5_000)
        #expect(options.format == .csv)
        #expect(options.workload == .w3)
    }
}
