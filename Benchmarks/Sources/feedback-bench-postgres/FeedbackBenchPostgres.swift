#if Postgres
import ArgumentParser
import FeedbackBenchmarkScenarios
import FeedbackLoop
import FeedbackLoopPostgres
import Foundation
import Logging
import PostgresNIO

/// `feedback-bench-postgres`: `feedback-bench --scenario durable` on PostgreSQL. It lives in this
/// package because `feedback-bench` must not link postgres-nio (swift-nio would add minutes to
/// every build of the root package); it runs the same scenario code and prints the same report.
@main
struct FeedbackBenchPostgres: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feedback-bench-postgres",
        abstract: "feedback-bench's durable scenario on PostgreSQL.",
        discussion: """
            A counter as a DurableLoop on PostgresJournal: sends with group commit, sendAndWait from one and \
            from 64 callers, against the same loop in memory and against a bare INSERT loop on the same \
            server (the limit) and the journal's own append; recovery with and without snapshots; a journal \
            with retention (keep 2 snapshots) against one without, each in a schema of its own: filling, \
            recovery, and the size of its tables. Prints the report feedback-bench prints; exits 1 if a run \
            fails its checks or the server cannot be used.

            Everything is written into schemas of its own (feedback_bench_PID_TIME and \
            feedback_bench_PID_TIME_journal_N), dropped at the end: the server's other tables are not touched. For a throwaway server on loopback, from the \
            repository's root: .ci/postgres.sh swift run -c release --package-path Benchmarks --traits Postgres \
            feedback-bench-postgres
            """)

    @Option(
        name: .customLong("postgres-url"),
        help: """
            postgres://user[:password]@host[:port]/database, TLS off (default: the \
            \(Self.environmentVariable) environment variable, which .ci/postgres.sh sets).
            """)
    var postgresURL: String?

    @Option(help: "\(Backend.allCases.map(\.rawValue).joined(separator: ", ")) or all.")
    var backend = "all"

    // `.unconditional`: `--events -1` must reach the range check below, not be taken for a flag.
    @Option(
        parsing: .unconditional,
        help: "Sets the sizes as in feedback-bench (1 to 100,000,000): sends per run are a fiftieth, at most 20,000. Overrides --size.")
    var events: Int?

    @Option(help: "small, medium or large (default medium: 1,000,000 events).")
    var size: String?

    @Option(
        parsing: .unconditional,
        help: "Events journaled before the recovery runs (100 to 10,000,000; default a tenth of --events, at most 100,000).")
    var recoveryEvents: Int?

    @Option(help: "table, json or csv.")
    var format = "table"

    static let environmentVariable = "FEEDBACKLOOP_POSTGRES_URL"

    struct Options: Sendable {
        var configuration: PostgresClient.Configuration
        var backends: [Backend]
        var size: BenchmarkSize
        var recoveryEvents: Int?
        var format: ReportFormat
    }

    func validate() throws {
        _ = try options(environment: ProcessInfo.processInfo.environment)
    }

    /// The server's configuration, from `--postgres-url` or else the environment.
    static func server(url flag: String?, environment: [String: String]) throws -> PostgresClient.Configuration {
        guard let url = flag ?? environment[environmentVariable] else {
            throw ValidationError("""
                no server: give --postgres-url postgres://USER@HOST:PORT/DATABASE or set \(environmentVariable); \
                `.ci/postgres.sh COMMAND` runs COMMAND against a throwaway server with it set
                """)
        }
        do {
            return try PostgresJournal.configuration(url: url)
        } catch {
            throw ValidationError("--postgres-url: \(error)")
        }
    }

    func options(environment: [String: String]) throws -> Options {
        let configuration = try Self.server(url: postgresURL, environment: environment)
        let backends: [Backend]
        if backend == "all" {
            backends = Backend.allCases
        } else if let one = Backend(rawValue: backend) {
            backends = [one]
        } else {
            throw ValidationError("unknown backend '\(backend)'; use \(Backend.allCases.map(\.rawValue).joined(separator: ", ")) or all")
        }
        let benchmarkSize: BenchmarkSize
        do {
            benchmarkSize = try BenchmarkSize(events: events, size: size)
        } catch {
            throw ValidationError(error.description)
        }
        if let recoveryEvents, !(100...10_000_000).contains(recoveryEvents) {
            throw ValidationError("--recovery-events must be between 100 and 10,000,000, not \(recoveryEvents)")
        }
        guard let reportFormat = ReportFormat(rawValue: format) else {
            throw ValidationError("unknown format '\(format)'; use table, json or csv")
        }
        return Options(
            configuration: configuration, backends: backends, size: benchmarkSize, recoveryEvents: recoveryEvents,
            format: reportFormat)
    }

    func run() async throws {
        let options = try options(environment: ProcessInfo.processInfo.environment)
        // swift-log's default handler writes to standard output, where the report goes.
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        var runner = BenchmarkRunner(size: options.size, backends: options.backends, scenarios: [.durable])
        runner.durableRecoveryEvents = options.recoveryEvents
        let start = Date()
        let report: BenchmarkReport
        do {
            report = try await PostgresBenchmark.run(options.configuration, runner: runner) { line in
                let elapsed = String(format: "%5.1f", Date().timeIntervalSince(start))
                FileHandle.standardError.write(Data("[\(elapsed) s] \(line)\n".utf8))
            }
        } catch let failure as ScenarioFailure {
            throw Self.failure("FAILED, no figures reported: \(failure)")
        } catch {
            throw Self.failure(PostgresBenchmark.describe(error))
        }
        FileHandle.standardOutput.write(Data(try options.format.render(report).utf8))
        let failures = report.failures
        if !failures.isEmpty {
            let lines = failures.map { "\n  \($0)" }.joined()
            throw Self.failure("FAILED, \(failures.count) run(s) broke their checks:\(lines)")
        }
    }

    /// Prints `message` on standard error; the exit status that goes with it.
    static func failure(_ message: String) -> ExitCode {
        FileHandle.standardError.write(Data("feedback-bench-postgres: \(message)\n".utf8))
        return .failure
    }
}
#endif
