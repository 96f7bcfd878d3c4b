#if Postgres
import FeedbackBenchmarkScenarios
import FeedbackLoop
import FeedbackLoopDurable
import FeedbackLoopPostgres
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The `durable` scenario's store on PostgreSQL: every durable loop runs on one `PostgresJournal`
/// (each measurement under a loop id of its own), and the limit is a bare `INSERT` loop into a
/// table of the journal's shape on the same server, through the same client.
///
/// The journals the retention and disk rows compare (``separateJournal(retention:)``) each live
/// in a schema of their own, reached through a client of their own whose `search_path` is that
/// schema: their tables hold nothing else, so their size is the journal's.
final class PostgresBenchmarkStore: DurableBenchmarkStore {
    let client: PostgresClient
    let durableJournal: PostgresJournal
    let name: String
    let limit = """
        bare INSERT … FROM UNNEST of pre-encoded events into a table of the journal's shape, same server and client, \
        one statement per transaction (autocommit), no loop, no lease (1,024 or 1 events per transaction)
        """
    let logger: Logger
    /// The configuration of ``client`` without its `search_path`, for the separate journals' clients.
    let configuration: PostgresClient.Configuration
    /// The benchmark's schema, which the separate journals' schemas are named after.
    let schema: String
    private let bareRuns = Mutex(0)
    private let separate = Mutex(Separate())

    /// The separate journals: each one's schema, and the tasks running their clients.
    private struct Separate {
        var made = 0
        var schemas: [ObjectIdentifier: String] = [:]
        var clients: [Task<Void, Never>] = []
    }

    /// A store on `client`, which must be running and whose connections' `search_path` is
    /// `schema` (where the journal's tables and the bare table are created); `configuration` is
    /// the client's without that `search_path`.
    init(
        client: PostgresClient, configuration: PostgresClient.Configuration, schema: String, serverName: String, logger: Logger
    ) async throws {
        self.client = client
        self.configuration = configuration
        self.schema = schema
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

    /// A journal in a new schema (`<schema>_journal_N`), on a new client running until
    /// ``close()``, which drops the schema.
    func separateJournal(retention: JournalRetention?) async throws -> PostgresJournal? {
        let name = separate.withLock { separate in
            separate.made += 1
            return "\(schema)_journal_\(separate.made)"
        }
        // The name is made of digits, letters and underscores: safe to splice into the statement.
        try await client.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \(name)"), logger: logger)
        var configuration = self.configuration
        configuration.options.additionalStartupParameters.append(("search_path", name))
        let client = PostgresClient(configuration: configuration)
        let journal = PostgresJournal(
            client: client, node: "feedback-bench", leaseDuration: .seconds(24 * 3600), retention: retention, logger: logger)
        separate.withLock {
            $0.schemas[ObjectIdentifier(journal)] = name
            $0.clients.append(Task { await client.run() })
        }
        return journal
    }

    /// Every table in the journal's schema — events, snapshots, leases and the (empty) inbox —
    /// with its indexes, TOAST and free-space and visibility maps (`pg_total_relation_size`): the
    /// files the journal has made the server keep, at whatever size it has left them. Deleted
    /// rows stay in them as free space until a later insert reuses it.
    func bytesOnDisk(_ journal: PostgresJournal) async throws -> Int? {
        guard let name = separate.withLock({ $0.schemas[ObjectIdentifier(journal)] }) else { return nil }
        let rows = try await client.query("""
            SELECT COALESCE(sum(pg_total_relation_size(c.oid)), 0)::BIGINT
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = \(name) AND c.relkind = 'r'
            """, logger: logger)
        for try await bytes in rows.decode(Int64.self) { return Int(bytes) }
        return nil
    }

    /// Stops the separate journals' clients and drops their schemas; a schema that cannot be
    /// dropped is reported on standard error.
    func close() async {
        let (schemas, clients) = separate.withLock { separate in
            defer { separate = Separate() }
            return (Array(separate.schemas.values), separate.clients)
        }
        for task in clients { task.cancel() }
        for task in clients { await task.value }
        for name in schemas.sorted() {
            do {
                try await client.query(PostgresQuery(unsafeSQL: "DROP SCHEMA \(name) CASCADE"), logger: logger)
            } catch {
                FileHandle.standardError.write(
                    Data("feedback-bench-postgres: could not drop schema \(name): \(PostgresBenchmark.describe(error))\n".utf8))
            }
        }
    }

    /// `VACUUM ANALYZE` of the journal's tables, as autovacuum would do to a journal at rest: it
    /// sets every new row's hint bits and the planner's statistics. Without it the first
    /// recovery timed after the fill read 1,000,000 events in 43 s, the next ones in 7–11 s.
    func settle() async throws {
        let schemas = [schema] + separate.withLock { Array($0.schemas.values) }.sorted()
        for name in schemas {
            // Digits, letters and underscores: safe to splice.
            let tables = "\(name).feedbackloop_events, \(name).feedbackloop_snapshots"
            for try await _ in try await client.query(PostgresQuery(unsafeSQL: "VACUUM ANALYZE \(tables)"), logger: logger) {}
        }
    }

    /// Nanoseconds per event for `events` pre-encoded events inserted `perTransaction` at a time,
    /// each `INSERT` a transaction of its own: one round trip and one WAL flush per transaction,
    /// the least any journal on this server can pay. (`PostgresJournal.append` is one round trip
    /// too, a statement that also moves the lease row's head and checks the lease at commit.)
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

extension PostgresBenchmarkStore {
    /// The counter on `PostgresJournal`, with `DurableLoop` compiled in this module for it.
    func openCounter(_ backend: Backend, _ journal: PostgresJournal, id: String) async throws -> DurableLoop<Int, Int> {
        try await DurableScenario.open(backend, journal, id: id)
    }

    /// `PostgresJournal.append` of the same pre-encoded events under a new loop id of the shared
    /// journal: the bare insert plus the fencing `UPDATE` of the lease row and the commit-time
    /// lease check, in one statement (one round trip, as the bare insert).
    func journalAppends(events: Int, perTransaction: Int) async throws -> Double? {
        let loop = bareRuns.withLock { runs in
            runs += 1
            return "journal-append-\(runs)"
        }
        return try await DurableScenario.bareAppends(durableJournal, id: loop, events: events, perTransaction: perTransaction)
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
                    client: client, configuration: configuration, schema: schema,
                    serverName: "PostgreSQL \(version) at \(host)", logger: logger)
                do {
                    let report = try await runner.runDurable(on: store, progress: progress)
                    await store.close()
                    return report
                } catch {
                    await store.close()
                    throw error
                }
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
