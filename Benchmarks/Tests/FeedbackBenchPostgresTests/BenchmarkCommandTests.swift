#if Postgres
import ArgumentParser
import FeedbackBenchmarkScenarios
import FeedbackLoop
import FeedbackLoopPostgres
import Foundation
import PostgresNIO
import Testing

@testable import feedback_bench_postgres

/// `feedback-bench-postgres`: bad input is a usage error naming the problem; a server that cannot
/// be used is a clear error, not a crash or a hang.
@Suite struct BenchmarkCommandTests {
    static let url = "postgres://feedbackloop@127.0.0.1:5432/feedbackloop"

    @Test(arguments: [
        (["--postgres-url", "http://example.com/db"], "'http://example.com/db' is not a postgres:// URL"),
        (["--postgres-url", "postgres:///db"], "names no host"),
        (["--postgres-url", "postgres://127.0.0.1/db"], "names no user"),
        (["--postgres-url", url, "--backend", "fiber"], "unknown backend 'fiber'"),
        (["--postgres-url", url, "--events", "0"], "--events must be a positive number, not 0"),
        (["--postgres-url", url, "--events", "-5"], "--events must be a positive number, not -5"),
        (["--postgres-url", url, "--events", "999999999999"], "more than the maximum of 100000000"),
        (["--postgres-url", url, "--events", "10", "--size", "small"], "either --events or --size"),
        (["--postgres-url", url, "--size", "huge"], "unknown size 'huge'"),
        (["--postgres-url", url, "--recovery-events", "99"], "--recovery-events must be between 100 and 10,000,000, not 99"),
        (["--postgres-url", url, "--recovery-events", "-1"], "--recovery-events must be between 100 and 10,000,000, not -1"),
        (["--postgres-url", url, "--format", "xml"], "unknown format 'xml'"),
        (["--postgres-url"], "Missing value for '--postgres-url"),
    ])
    func badInputIsAUsageError(arguments: [String], message: String) {
        do {
            _ = try FeedbackBenchPostgres.parseAsRoot(arguments)
            Issue.record("\(arguments) parsed")
        } catch {
            #expect(FeedbackBenchPostgres.exitCode(for: error) == .validationFailure)
            #expect(FeedbackBenchPostgres.message(for: error).contains(message), "\(FeedbackBenchPostgres.message(for: error))")
        }
    }

    @Test func withoutAURLItSaysHowToGetAServer() throws {
        do {
            _ = try FeedbackBenchPostgres.server(url: nil, environment: [:])
            Issue.record("no URL was accepted")
        } catch {
            #expect(FeedbackBenchPostgres.exitCode(for: error) == .validationFailure)
            #expect(FeedbackBenchPostgres.message(for: error).contains("give --postgres-url"))
            #expect(FeedbackBenchPostgres.message(for: error).contains("FEEDBACKLOOP_POSTGRES_URL"))
        }
        let fromEnvironment = try FeedbackBenchPostgres.server(url: nil, environment: ["FEEDBACKLOOP_POSTGRES_URL": Self.url])
        #expect(fromEnvironment.host == "127.0.0.1")
        let flagFirst = try FeedbackBenchPostgres.server(
            url: "postgres://u@10.0.0.1/db", environment: ["FEEDBACKLOOP_POSTGRES_URL": Self.url])
        #expect(flagFirst.host == "10.0.0.1")
    }

    @Test func defaultsRunEveryBackendAtMediumSize() throws {
        let command = try #require(try FeedbackBenchPostgres.parseAsRoot(["--postgres-url", Self.url]) as? FeedbackBenchPostgres)
        let options = try command.options(environment: [:])
        #expect(options.backends == Backend.allCases)
        #expect(options.size.events == 1_000_000)
        #expect(options.recoveryEvents == nil)
        #expect(options.format == .table)
    }

    /// Nothing listens on port 1: the run ends at once with the place it tried, before any schema.
    @Test func anUnreachableServerIsAClearError() async throws {
        let configuration = try PostgresJournal.configuration(url: "postgres://feedbackloop@127.0.0.1:1/feedbackloop")
        let runner = BenchmarkRunner(size: try BenchmarkSize(events: 1_000), backends: [.callback], scenarios: [.durable])
        do {
            _ = try await PostgresBenchmark.run(configuration, runner: runner, progress: { _ in })
            Issue.record("ran against a closed port")
        } catch {
            let message = PostgresBenchmark.describe(error)
            #expect(message.hasPrefix("cannot connect to PostgreSQL at 127.0.0.1:1/feedbackloop: "), "\(message)")
            #expect(message.lowercased().contains("refused"), "\(message)")
        }
    }
}

/// The scenario against the real server of `.ci/postgres.sh`.
@Suite("feedback-bench-postgres against a server", .enabled(if: Server.url != nil, Server.skipReason))
struct BenchmarkRunTests {
    /// Every backend fills every row of loops, every limit is measured, the heading names
    /// PostgreSQL, and the benchmark's schemas are gone afterwards.
    @Test func aSmallRunReportsEveryRowAndLeavesNothingBehind() async throws {
        let url = try #require(Server.url)
        let configuration = try PostgresJournal.configuration(url: url)
        let runner = BenchmarkRunner(size: try BenchmarkSize(events: 1_000), backends: Backend.allCases, scenarios: [.durable])
        let report = try await PostgresBenchmark.run(configuration, runner: runner, progress: { _ in })
        #expect(report.failures.isEmpty)
        #expect(report.backends == Backend.allCases.map(\.rawValue))
        let scenario = try #require(report.scenarios.first)
        #expect(scenario.summary?.hasPrefix("durable loop on PostgreSQL ") == true, "\(scenario.summary ?? "nil")")
        #expect(scenario.limit.hasPrefix("bare INSERT"))
        // Six rows of loops, three of retention (recovery and two of disk), and three of the
        // limit's alone: the journal's own append and the two fills, which no loop runs.
        #expect(scenario.rows.count == 12, "\(scenario.rows.map(\.label))")
        #expect(scenario.rows.filter { ($0.limit ?? 0) > 0 }.count == 5, "\(scenario.rows.map(\.label))")
        for row in scenario.rows {
            if row.values.isEmpty, let limit = row.limit {
                #expect(limit > 0, "\(row.label)")
                continue
            }
            for backend in Backend.allCases {
                let value = try #require(row.values[backend.rawValue], "\(row.label) has no \(backend) figure")
                #expect(value > 0, "\(row.label), \(backend)")
            }
        }
        let rows = try await Server.client.query(
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name LIKE 'feedback\\_bench\\_%'")
        for try await count in rows.decode(Int64.self) { #expect(count == 0) }
    }

    /// A database that does not exist: the server's own message, not postgres-nio's generic one.
    @Test func aMissingDatabaseIsAClearError() async throws {
        let url = try #require(Server.url)
        var components = try #require(URLComponents(string: url))
        components.path = "/no_such_database"
        let missing = try #require(components.string)
        let configuration = try PostgresJournal.configuration(url: missing)
        let runner = BenchmarkRunner(size: try BenchmarkSize(events: 1_000), backends: [.callback], scenarios: [.durable])
        do {
            _ = try await PostgresBenchmark.run(configuration, runner: runner, progress: { _ in })
            Issue.record("ran against a missing database")
        } catch {
            let message = PostgresBenchmark.describe(error)
            #expect(message.contains("database \"no_such_database\" does not exist"), "\(message)")
        }
    }
}
#endif
