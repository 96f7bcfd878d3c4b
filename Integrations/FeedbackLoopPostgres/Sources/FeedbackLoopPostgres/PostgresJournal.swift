import FeedbackLoopDurable
import Foundation
import Logging
import PostgresNIO

/// The `EventJournal` for many nodes: one PostgreSQL database, single-writer
/// ownership of each loop through a lease row with a fencing epoch.
///
/// ```swift
/// let client = PostgresClient(configuration: try PostgresJournal.configuration(url: url))
/// let journal = PostgresJournal(client: client, node: "node-a")
/// // run `client` in your ServiceGroup, then:
/// let loop = try await DurableLoop(id: "session-42", journal: journal, initial: …, reduce: …)
/// let keeper = LeaseKeeper(loop: loop, journal: journal)              // a Service: add it to the group
/// ```
///
/// ## Ownership
/// ``acquire(loop:)`` takes the loop's lease row when it is free, expired, or already this node's,
/// and bumps its epoch; the lease lasts ``leaseDuration`` on the database's clock (`now()`), so
/// that nodes' clocks never have to agree. A ``LeaseKeeper`` renews it; when renewal fails the
/// loop stops and its effects are cancelled. Another node can take the loop only once the lease
/// has expired (or was released by ``release(loop:epoch:)``).
///
/// ## Fencing
/// Every ``append(loop:epoch:events:snapshot:)`` updates the lease row's head in the same
/// transaction, only where the epoch is the caller's and the lease is live: a deposed owner —
/// paused past its lease, say — is refused with `JournalError.fenced(loop:epoch:)`
/// and writes nothing. The row lock also orders an append in flight before a takeover.
///
/// ## Inbox
/// Any node can send an event to a loop that another owns: ``deliver(_:to:schemaVersion:)`` adds
/// it to an inbox table and notifies the owner, whose ``InboxRelay`` journals it into the loop.
/// The table is the truth; `LISTEN/NOTIFY` only wakes the relay, which also polls.
public final class PostgresJournal: EventJournal {
    /// The client the journal queries through; it must be running (`client.run()`, or in a
    /// `ServiceGroup`).
    public let client: PostgresClient
    /// This node's name in lease rows: acquiring a loop this node already owns takes it at once.
    public let node: String
    /// How long a lease lasts after it is taken or renewed, on the database's clock.
    public let leaseDuration: Duration
    let logger: Logger
    let migrated = MigrationGate()

    /// The channel of inbox notifications; the payload is the loop's id.
    public static let inboxChannel = "feedbackloop_inbox"

    /// A journal on `client`, for the node named `node`.
    ///
    /// - Parameters:
    ///   - client: A running `PostgresClient`.
    ///   - node: This node's name; unique among the nodes sharing the database.
    ///   - leaseDuration: How long a lease lasts without renewal. Default: 10 seconds.
    ///   - logger: Where queries are logged (at the client's levels).
    public init(client: PostgresClient, node: String, leaseDuration: Duration = .seconds(10), logger: Logger = Logger(label: "FeedbackLoopPostgres")) {
        precondition(leaseDuration > .zero, "leaseDuration must be positive")
        self.client = client
        self.node = node
        self.leaseDuration = leaseDuration
        self.logger = logger
    }

    /// A client configuration from a `postgres://user:password@host:port/database` URL (TLS off:
    /// for loopback and private networks; build the configuration yourself for TLS).
    ///
    /// - Throws: `JournalError.unavailable(_:)` naming what the URL lacks.
    public static func configuration(url: String) throws -> PostgresClient.Configuration {
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? "") else {
            throw JournalError.unavailable("'\(url)' is not a postgres:// URL")
        }
        guard let host = components.host, !host.isEmpty else { throw JournalError.unavailable("'\(url)' names no host") }
        guard let user = components.user, !user.isEmpty else { throw JournalError.unavailable("'\(url)' names no user") }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        return PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: user, password: components.password,
            database: database.isEmpty ? nil : database, tls: .disable)
    }

    var leaseSeconds: Double {
        Double(leaseDuration.components.seconds) + Double(leaseDuration.components.attoseconds) / 1e18
    }

    /// Creates the tables once per journal (concurrent creators are serialised by an advisory
    /// lock).
    func migrate() async throws {
        let client = self.client, logger = self.logger
        try await migrated.once {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(7401735)", logger: logger)
                try await connection.query("""
                    CREATE TABLE IF NOT EXISTS feedbackloop_leases (
                        loop TEXT PRIMARY KEY, owner TEXT NOT NULL, epoch BIGINT NOT NULL,
                        head BIGINT NOT NULL, lease_until TIMESTAMPTZ NOT NULL)
                    """, logger: logger)
                try await connection.query("""
                    CREATE TABLE IF NOT EXISTS feedbackloop_events (
                        loop TEXT NOT NULL, sequence BIGINT NOT NULL, schema_version INT NOT NULL,
                        payload BYTEA NOT NULL, PRIMARY KEY (loop, sequence))
                    """, logger: logger)
                try await connection.query("""
                    CREATE TABLE IF NOT EXISTS feedbackloop_snapshots (
                        loop TEXT NOT NULL, sequence BIGINT NOT NULL, schema_version INT NOT NULL,
                        payload BYTEA NOT NULL, PRIMARY KEY (loop, sequence))
                    """, logger: logger)
                try await connection.query("""
                    CREATE TABLE IF NOT EXISTS feedbackloop_inbox (
                        id BIGSERIAL PRIMARY KEY, loop TEXT NOT NULL, schema_version INT NOT NULL,
                        payload BYTEA NOT NULL)
                    """, logger: logger)
                try await connection.query(
                    "CREATE INDEX IF NOT EXISTS feedbackloop_inbox_loop ON feedbackloop_inbox (loop, id)", logger: logger)
            }
        }
    }

    public func acquire(loop: String) async throws -> UInt64 {
        try await operation("acquire", loop: loop) {
            try await migrate()
            let seconds = leaseSeconds
            let rows = try await client.query("""
                INSERT INTO feedbackloop_leases (loop, owner, epoch, head, lease_until)
                VALUES (\(loop), \(node), 1, 0, now() + make_interval(secs => \(seconds)))
                ON CONFLICT (loop) DO UPDATE SET owner = EXCLUDED.owner, epoch = feedbackloop_leases.epoch + 1,
                    lease_until = EXCLUDED.lease_until
                WHERE feedbackloop_leases.lease_until < now() OR feedbackloop_leases.owner = EXCLUDED.owner
                RETURNING epoch
                """, logger: logger)
            for try await row in rows { return try StoredRow(row, loop: loop, record: "the lease").unsigned(0, atLeast: 1) }
            throw JournalError.ownedElsewhere(loop: loop)
        }
    }

    /// Extends the lease taken with `epoch` by ``leaseDuration`` from now (the database's).
    ///
    /// - Throws: `JournalError.fenced(loop:epoch:)` when the lease has expired or
    ///   another owner holds the loop; `JournalError.unavailable(_:)` when the database failed.
    public func renew(loop: String, epoch: UInt64) async throws {
        try await operation("renew", loop: loop) {
            let seconds = leaseSeconds
            let rows = try await client.query("""
                UPDATE feedbackloop_leases SET lease_until = now() + make_interval(secs => \(seconds))
                WHERE loop = \(loop) AND epoch = \(Int64(epoch)) AND lease_until > now() RETURNING epoch
                """, logger: logger)
            for try await _ in rows { return }
            throw JournalError.fenced(loop: loop, epoch: epoch)
        }
    }

    public func release(loop: String, epoch: UInt64) async throws {
        try await operation("release", loop: loop) {
            try await client.query("""
                UPDATE feedbackloop_leases SET lease_until = now() - interval '1 second'
                WHERE loop = \(loop) AND epoch = \(Int64(epoch))
                """, logger: logger)
        }
    }

    public func latestSnapshot(loop: String) async throws -> JournalRecord? {
        try await operation("reading the latest snapshot", loop: loop) {
            try await migrate()
            let rows = try await client.query("""
                SELECT sequence, schema_version, payload FROM feedbackloop_snapshots
                WHERE loop = \(loop) ORDER BY sequence DESC LIMIT 1
                """, logger: logger)
            for try await row in rows { return try Self.record(row, loop: loop, kind: "snapshot", after: nil) }
            return nil
        }
    }

    public func events(loop: String, after sequence: UInt64, limit: Int) async throws -> [JournalRecord] {
        try await operation("reading events", loop: loop) {
            try await migrate()
            let rows = try await client.query("""
                SELECT sequence, schema_version, payload FROM feedbackloop_events
                WHERE loop = \(loop) AND sequence > \(Int64(sequence)) ORDER BY sequence LIMIT \(Int64(limit))
                """, logger: logger)
            var records: [JournalRecord] = []
            for try await row in rows {
                records.append(try Self.record(row, loop: loop, kind: "event", after: records.last?.sequence ?? sequence))
            }
            return records
        }
    }

    public func append(loop: String, epoch: UInt64, events: [JournalRecord], snapshot: JournalRecord?) async throws {
        try await operation("append", loop: loop) {
            guard let first = events.first?.sequence else { return }
            for (offset, record) in events.enumerated() where record.sequence != first + UInt64(offset) {
                throw JournalError.sequenceConflict(loop: loop, expected: first + UInt64(offset), found: record.sequence)
            }
            let last = Int64(first) + Int64(events.count) - 1
            let sequences = events.map { Int64($0.sequence) }
            let versions = events.map { Int32($0.schemaVersion) }
            let payloads = events.map { ByteBuffer(bytes: $0.payload) }
            let logger = self.logger
            try await transaction { connection in
                let fenced = try await connection.query("""
                    UPDATE feedbackloop_leases SET head = \(last)
                    WHERE loop = \(loop) AND epoch = \(Int64(epoch)) AND lease_until > now() AND head = \(Int64(first) - 1)
                    RETURNING head
                    """, logger: logger)
                var updated = false
                for try await _ in fenced.decode(Int64.self) { updated = true }
                if !updated {
                    let rows = try await connection.query(
                        "SELECT epoch, head, lease_until > now() FROM feedbackloop_leases WHERE loop = \(loop)", logger: logger)
                    for try await row in rows {
                        let lease = StoredRow(row, loop: loop, record: "the lease")
                        if try lease.integer(0) == Int64(epoch), try lease.bool(2) {
                            throw JournalError.sequenceConflict(loop: loop, expected: try lease.unsigned(1, atLeast: 0) + 1, found: first)
                        }
                    }
                    throw JournalError.fenced(loop: loop, epoch: epoch)
                }
                try await connection.query("""
                    INSERT INTO feedbackloop_events (loop, sequence, schema_version, payload)
                    SELECT \(loop), * FROM UNNEST(\(sequences)::BIGINT[], \(versions)::INT[], \(payloads)::BYTEA[])
                    """, logger: logger)
                if let snapshot {
                    let sequence = Int64(snapshot.sequence)
                    try await connection.query("""
                        INSERT INTO feedbackloop_snapshots (loop, sequence, schema_version, payload)
                        VALUES (\(loop), \(sequence), \(Int32(snapshot.schemaVersion)), \(ByteBuffer(bytes: snapshot.payload)))
                        ON CONFLICT (loop, sequence) DO UPDATE SET payload = EXCLUDED.payload
                        """, logger: logger)
                    try await connection.query(
                        "DELETE FROM feedbackloop_snapshots WHERE loop = \(loop) AND sequence < \(sequence)", logger: logger)
                }
            }
        }
    }

    /// Sends `event` to the loop `loop`, whichever node owns it: the event waits in the inbox
    /// table until the owner's ``InboxRelay`` journals it. Durable when this returns.
    ///
    /// - Throws: the event's `EncodingError`; `JournalError.unavailable(_:)` when the database
    ///   failed, naming the loop and the server's message.
    public func deliver(_ event: some Encodable, to loop: String, schemaVersion: Int = 1) async throws {
        let payload = ByteBuffer(bytes: Array(try JSONEncoder().encode(event)))
        try await operation("delivering an event", loop: loop) {
            try await migrate()
            let logger = self.logger
            try await transaction { connection in
                try await connection.query(
                    "INSERT INTO feedbackloop_inbox (loop, schema_version, payload) VALUES (\(loop), \(Int32(schemaVersion)), \(payload))",
                    logger: logger)
                // Delivered on commit only: a rolled-back delivery never wakes anyone.
                try await connection.query("SELECT pg_notify(\(Self.inboxChannel), \(loop))", logger: logger)
            }
        }
    }

    /// Runs `body`, one of the journal's operations on `loop`, with its errors as
    /// ``PostgresJournal/journalError(_:loop:operation:)`` gives them.
    @discardableResult
    func operation<Result>(_ name: String, loop: String?, _ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch {
            throw Self.journalError(error, loop: loop, operation: name)
        }
    }

    /// Runs `body` in a transaction, rethrowing the body's own error rather than postgres-nio's
    /// wrapper, so that callers see `JournalError` as it was thrown.
    func transaction(_ body: (PostgresConnection) async throws -> Void) async throws {
        do {
            try await client.withTransaction(logger: logger) { connection in try await body(connection) }
        } catch let error as PostgresTransactionError {
            if let thrown = error.closureError, error.rollbackError == nil { throw thrown }
            throw error
        }
    }

    /// Up to `limit` inbox entries of `loop`, oldest first.
    func inbox(loop: String, limit: Int) async throws -> [(id: Int64, record: JournalRecord)] {
        try await operation("reading the inbox", loop: loop) {
            let rows = try await client.query("""
                SELECT id, schema_version, payload FROM feedbackloop_inbox WHERE loop = \(loop) ORDER BY id LIMIT \(Int64(limit))
                """, logger: logger)
            var entries: [(id: Int64, record: JournalRecord)] = []
            for try await row in rows {
                let id = try StoredRow(row, loop: loop, record: "an inbox entry").integer(0)
                let entry = StoredRow(row, loop: loop, record: "inbox entry \(id)")
                entries.append((id, JournalRecord(sequence: 0, schemaVersion: try entry.schemaVersion(1), payload: try entry.bytes(2))))
            }
            return entries
        }
    }

    /// The record in a row of `sequence, schema_version, payload`; `previous` is the sequence
    /// the row follows, which names it when its own sequence cannot be read.
    static func record(_ row: PostgresRow, loop: String, kind: String, after previous: UInt64?) throws -> JournalRecord {
        let unread = previous.map { "the \(kind) after \($0)" } ?? "the latest \(kind)"
        let sequence = try StoredRow(row, loop: loop, record: unread).sequence(0)
        let stored = StoredRow(row, loop: loop, record: "\(kind) \(sequence)")
        return JournalRecord(sequence: sequence, schemaVersion: try stored.schemaVersion(1), payload: try stored.bytes(2))
    }

    func removeFromInbox(_ id: Int64) async throws {
        try await operation("removing inbox entry \(id)", loop: nil) {
            try await client.query("DELETE FROM feedbackloop_inbox WHERE id = \(id)", logger: logger)
        }
    }
}

/// Runs a piece of work once; concurrent callers wait for the first, a failure lets the next try.
actor MigrationGate {
    private var done = false
    private var running: Task<Void, any Error>?

    func once(_ work: @escaping @Sendable () async throws -> Void) async throws {
        if done { return }
        if let running { return try await running.value }
        let task = Task { try await work() }
        running = task
        do {
            try await task.value
            done = true
        } catch {
            running = nil
            throw error
        }
    }
}
