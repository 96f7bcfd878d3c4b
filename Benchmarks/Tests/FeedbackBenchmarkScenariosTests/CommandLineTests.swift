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
        (["--instructions", "--workload", "w9", "--bare"], "unknown workload 'w9'"),
        (["--instructions", "--workload", "w1", "--scenario", "throughput", "--bare"], "either --workload or --scenario"),
        (["--instructions", "--workload", "w1", "--bare", "--backend", "actor"], "either --bare or --backend"),
        (["--workload", "w1"], "--workload only goes with --instructions"),
        (["--instructions", "--scenario", "latency", "--backend", "actor"], "exactly one --scenario"),
        (["--instructions", "--scenario", "throughput"], "one --backend"),
        (["--output", ""], "--output needs a file name (or - for standard output)"),
        (["--frobnicate"], "frobnicate"),
        (["--loops", "10"], "--loops only goes with --scenario scaling"),
        (["--scenario", "scaling", "--loops", "0"], "--loops must be between 1 and 1000000, not 0"),
        (["--scenario", "scaling", "--loops", "-3"], "--loops must be between 1 and 1000000, not -3"),
        (["--scenario", "scaling", "--loops", "1000001"], "--loops must be between 1 and 1000000"),
        (["--allocator", "tcmalloc"], "unknown allocator 'tcmalloc'; use system or jemalloc"),
        (["--render", "r.json", "--allocator", "jemalloc"], "--allocator does not apply"),
        (["--render", ""], "--render needs a file name"),
        (["--render", "r.json", "--instructions", "--scenario", "pingpong", "--bare"], "exclude each other"),
        // PostgreSQL is feedback-bench-postgres's: the message names the command, with the URL given.
        (["--scenario", "durable", "--postgres-url", "postgres://u@127.0.0.1:5432/db"],
         "`swift run -c release --package-path Benchmarks --traits Postgres feedback-bench-postgres --postgres-url 'postgres://u@127.0.0.1:5432/db'`"),
        (["--postgres-url", "it's"], "--postgres-url 'it'\\''s'"),
        (["--postgres-url"], "Missing value for '--postgres-url"),
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
        #expect(options.peer)
        #expect(options.scenarios == Scenario.allCases.filter { $0 != .scaling })
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
        #expect(options.contender == .backend(.actor))
        #expect(!options.peer)
    }

    @Test(arguments: [
        (["--workload", "w3-callback", "--backend", "opencombine"], Workload.w3callback, Contender.peer),
        (["--workload", "w2", "--bare"], .w2, .bare),
        (["--scenario", "throughput", "--backend", "callback"], .w1, .backend(.callback)),
    ])
    func instructionsNameAWorkloadAndWhoRunsIt(arguments: [String], workload: Workload, contender: Contender) throws {
        let command = try #require(try FeedbackBench.parseAsRoot(["--instructions"] + arguments) as? FeedbackBench)
        let options = try command.options()
        #expect(options.workload == workload)
        #expect(options.contender == contender)
    }

    @Test func thePeerAloneIsABackendChoice() throws {
        let command = try #require(try FeedbackBench.parseAsRoot(["--backend", "opencombine"]) as? FeedbackBench)
        let options = try command.options()
        #expect(options.backends.isEmpty)
        #expect(options.peer)
    }
}
