#if Postgres
import FeedbackBenchmarkScenarios
import FeedbackLoopDurable
import FeedbackLoopPostgres
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The `durable` scenario's store on PostgreSQL: every durable loop runs on one `PostgresJournal`
/// (each measurement under a loop id of its own), and the limit is a bare `INSERT` loop into a
/// table of the journal's shape on the same server, through the same client.
final class PostgresBenchmarkStore: DurableBenchmarkStore {
    let client: PostgresClient
    let durableJournal: PostgresJournal
    let name: String
    let limit = """
        bare INSERT … FROM UNNEST of pre-encoded events into a table of the journal's shape, same server and client, \
        one statement per transaction (autocommit), no loop, no lease (1,024 or 1 events per transaction)
        """
    let logger: Logger
    private let bareRuns = Mutex(0)

    /// A store on `client`, which must be running and whose connections' `search_path` is the
    /// benchmark's own schema (where the journal's tables and the bare table are created).
    init(client: PostgresClient, serverName: String, logger: Logger) async throws {
        self.client = client
        self.name = serverName
        self.logger = logger
        // The scenario appends for minutes without a LeaseKeeper: a lease that outlives any run,
        // so that what is measured is the journal's writes, never a renewal.
        durableJournal = PostgresJournal(client: client, node: "feedback-bench", leaseDuration: .seconds(24 * 3600), logger: logger)
        try await client.query("""
            CREATE TABLE bare_events (
                loop TEXT NOT NULL, sequence BIGINT NOT NULL, schema_version INT NOT NULL,
                payload BYTEA NOT NULL, PRIMARY KEY (loop, sequence))
            """, logger: logger)
    }

    func journal() -> PostgresJournal { durableJournal }

    /// `VACUUM ANALYZE` of the journal's tables, as autovacuum would do to a journal at rest: it
    /// sets every new row's hint bits and the planner's statistics. Without it the first
    /// recovery timed after the fill read 1,000,000 events in 43 s, the next ones in 7–11 s.
    func settle() async throws {
        for try await _ in try await client.query("VACUUM ANALYZE feedbackloop_events, feedbackloop_snapshots", logger: logger) {}
    }

    /// Nanoseconds per event for `events` pre-encoded events inserted `perTransaction` at a time,
    /// each `INSERT` a transaction of its own: one round trip and one WAL flush per transaction,
    /// the least any journal on this server can pay. (`PostgresJournal.append` adds `BEGIN`, the
    /// fencing `UPDATE` of the lease row and `COMMIT`: three more round trips.)
    func bareAppends(events: Int, perTransaction: Int) async throws -> Double {
        let loop = bareRuns.withLock { runs in
            runs += 1
            return "bare-\(runs)"
        }
        let payload = ByteBuffer(bytes: Array("1".utf8))
        var head = 0
        let clock = ContinuousClock()
        let start = clock.now
        while head < events {
            let count = Swift.min(perTransaction, events - head)
            let sequences = (1...count).map { Int64(head + $0) }
            let versions = [Int32](repeating: 1, count: count)
            let payloads = [ByteBuffer](repeating: payload, count: count)
            // The answer comes after ReadyForQuery, that is after the autocommit's WAL flush.
            let rows = try await client.query("""
                INSERT INTO bare_events (loop, sequence, schema_version, payload)
                SELECT \(loop), * FROM UNNEST(\(sequences)::BIGINT[], \(versions)::INT[], \(payloads)::BYTEA[])
                """, logger: logger)
            for try await _ in rows {}
            head += count
        }
        let elapsed = start.duration(to: clock.now)
        let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
        return nanoseconds / Double(events)
    }
}

/// Runs the `durable` scenario against the server at `configuration`, in a schema of its own that
/// is dropped at the end, whether the run succeeds or not.
enum PostgresBenchmark {
    /// What went wrong before or around the scenario: the server could not be reached or set up.
    struct SetupError: Error, CustomStringConvertible {
        var description: String
    }

    static func run(
        _ configuration: PostgresClient.Configuration, runner: BenchmarkRunner, progress: @escaping FeedbackBenchmarkScenarios.Progress
    ) async throws -> BenchmarkReport {
        let logger = Logger(label: "feedback-bench-postgres")
        guard let host = configuration.host, let port = configuration.port else {
            throw SetupError(description: "the configuration names no TCP host")
        }
        let place = "\(host):\(port)\(configuration.database.map { "/\($0)" } ?? "")"
        var connectionConfiguration = PostgresConnection.Configuration(
            host: host, port: port, username: configuration.username, password: configuration.password,
            database: configuration.database, tls: .disable)
        connectionConfiguration.options.connectTimeout = .seconds(10)
        let admin: PostgresConnection
        do {
            admin = try await PostgresConnection.connect(configuration: connectionConfiguration, id: 0, logger: logger)
        } catch {
            throw SetupError(description: "cannot connect to PostgreSQL at \(place): \(describe(error))")
        }
        let schema = "feedback_bench_\(getpid())_\(Int(Date().timeIntervalSince1970))"
        let version: String
        do {
            version = try await serverVersion(admin, logger: logger)
            // The name is made of digits and underscores: safe to splice into the statement.
            try await admin.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \(schema)"), logger: logger)
        } catch {
            try? await admin.close()
            throw SetupError(description: "cannot set up the benchmark's schema on \(place): \(describe(error))")
        }
        progress("PostgreSQL at \(place), schema \(schema) (dropped at the end)")
        let outcome: Result<BenchmarkReport, any Error>
        do {
            var clientConfiguration = configuration
            clientConfiguration.options.additionalStartupParameters.append(("search_path", schema))
            // No background logger: its one message here would be that the first query waited for
            // `run()` to start, and the client's failures reach the scenario as thrown errors.
            let client = PostgresClient(configuration: clientConfiguration)
            let report = try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                defer { group.cancelAll() }
                let store = try await PostgresBenchmarkStore(
                    client: client, serverName: "PostgreSQL \(version) at \(host)", logger: logger)
                return try await runner.runDurable(on: store, progress: progress)
            }
            outcome = .success(report)
        } catch {
            outcome = .failure(error)
        }
        do {
            try await admin.query(PostgresQuery(unsafeSQL: "DROP SCHEMA \(schema) CASCADE"), logger: logger)
        } catch {
            FileHandle.standardError.write(Data("feedback-bench-postgres: could not drop schema \(schema): \(describe(error))\n".utf8))
        }
        try? await admin.close()
        return try outcome.get()
    }

    /// The server's version number, e.g. "15.14" (Debian's builds append their own suffix).
    static func serverVersion(_ connection: PostgresConnection, logger: Logger) async throws -> String {
        for try await version in try await connection.query("SHOW server_version", logger: logger).decode(String.self) {
            return version.split(separator: " ").first.map(String.init) ?? version
        }
        return "(unknown version)"
    }

    /// A readable account of `error`: postgres-nio's `PSQLError` hides everything behind a
    /// generic description, so the server's message or the underlying I/O error is taken out.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        if let message = error.serverInfo?[.message] {
            let state = error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
            return message + state
        }
        if let underlying = error.underlying { return "\(error.code): \(underlying)" }
        return "\(error.code)"
    }
}
#endif
