#if Postgres
import FeedbackLoopDurable
import Foundation
import Instrumentation
import Logging
import PostgresNIO
import Synchronization

/// The `EventJournal` for many nodes: one PostgreSQL database, single-writer
/// ownership of each loop through a lease row with a fencing epoch.
///
/// ```swift
/// let client = PostgresClient(configuration: try PostgresJournal.configuration(url: url))
/// let journal = PostgresJournal(client: client, node: "node-a")
/// // run `client` in your ServiceGroup, then:
/// try await journal.checkHealth()                                     // fails fast when the database is unreachable
/// let loop = try await DurableLoop(id: "session-42", journal: journal, initial: …, reduce: …)
/// let keeper = LeaseKeeper(loop: loop, journal: journal)              // a Service: add it to the group
/// ```
///
/// ## Ownership
/// ``acquire(loop:)`` takes the loop's lease row when it is free, expired, or already this node's,
/// and bumps its epoch; the lease lasts ``leaseDuration`` on the database's clock, so that nodes'
/// clocks never have to agree. A ``LeaseKeeper`` renews it; when renewal fails the loop stops and
/// its effects are cancelled. Another node can take the loop only once the lease has expired (or
/// was released by ``release(loop:epoch:)``).
///
/// ## Fencing: what a paused or deposed owner can and cannot do
/// An owner can pause anywhere — a stopped process, a long garbage collection, a network
/// partition — and wake after its lease has ended. The journal guarantees:
///
/// - **No append that ends after its lease commits.** Every
///   ``append(loop:epoch:events:snapshot:)`` is one statement, its own transaction, that moves
///   the lease row's head only where the epoch is the caller's and the lease is live, and writes
///   nothing where it did not; once it has written, at the end of the statement, the lease is
///   checked again (a constraint trigger compares it with the database's `clock_timestamp()`). An
///   append that waited — for a row lock, say — until its lease had ended fails with
///   `JournalError.fenced(loop:epoch:)` and none of it is visible. The commit follows on the
///   server at once, without a word from the client (the protocol's `Sync` travels with the
///   statement), and the append holds the lease row until it has committed: no other owner can
///   take the loop in between.
/// - **An append whose commit began while the lease was live commits**, even when its owner
///   never learns it (its connection dropped, or it was killed). A takeover needs the lease row,
///   which the append holds until it has committed, so the next owner's epoch is ordered after
///   it and its recovery reads it. Nothing is lost and nothing is applied by two owners.
/// - **A paused owner holds the lease row only briefly.** An append sends its one statement
///   and the protocol's `Sync` together, and the server runs and commits it without waiting on
///   the client: a paused owner cannot keep it open. It waits at most half of
///   ``statementTimeout`` for a row lock (`lock_timeout`), and runs at most ``statementTimeout``
///   in all (`statement_timeout`): an append stuck on the server — inserting or pruning more
///   than it can in that time, say — is cancelled, writes nothing, and throws
///   `JournalError.unavailable(_:)` saying so. The journal's transactions of more than one
///   statement — taking a lease, delivering to the inbox — set their `lock_timeout` and
///   `idle_in_transaction_session_timeout` to half of ``statementTimeout``: a transaction left
///   idle between two statements — its owner paused, or the network gone — is ended by the
///   server (the session is terminated and the transaction rolled back, so it writes nothing).
///
/// PostgreSQL arms a statement's `statement_timeout` from its session's setting when the
/// statement starts, so the journal sets it, to ``statementTimeout``, on the session of each
/// connection of ``client`` it uses, the first time it uses it. A query of your own on a
/// connection the journal has used runs under that bound too, unless it sets its own: give the
/// journal a client of its own when your queries may run longer.
/// - **A takeover never waits for a paused owner.** ``acquire(loop:)`` waits at most half of
///   ``statementTimeout`` for a lease row that another transaction holds, then throws
///   `JournalError.ownedElsewhere(loop:)`; once the holder's transaction has ended, a new attempt
///   takes the loop if its lease has expired.
///
/// What the journal cannot do is stop a paused owner's effects when it wakes: they run until its
/// ``LeaseKeeper`` finds the lease lost at its next renewal and stops the loop, which cancels
/// them. An event such an effect sends is refused, since its append is fenced.
///
/// ## Unreachable database
/// Every operation waits at most ``connectionTimeout`` for a connection from the client
/// (connecting included) and then throws `JournalError.unavailable(_:)`: postgres-nio alone keeps
/// a request waiting while it retries for a minute. ``checkHealth(timeout:)`` answers within its
/// timeout whatever the database does, for a health endpoint.
///
/// ## Retention
/// With a `JournalRetention` (``retention``), an append that writes a snapshot deletes, once its
/// fence has moved the head and in the same statement, the snapshots older than the newest
/// `snapshotsKept` and up to `maximumEventsPrunedPerAppend` events before the oldest of them: a
/// deposed owner's or a lapsed lease's append prunes nothing, and a prune that fails rolls the
/// append back with it. Deleted rows become free space for later rows after a (auto)vacuum. With a `JournalArchive` in the policy, the events the prune
/// will delete are read and handed to it before the append (two more reads and the
/// archive's time per snapshot append), and the prune deletes none it did not take.
///
/// ## Schema
/// The journal creates its tables, the lease check and the append's server-side
/// function (`feedbackloop_append`) the first time it is used, under an advisory lock, and
/// brings the tables of an earlier version up to date the same way: the lease row's `feature`
/// column (see ``acquire(loop:feature:)``; a loop journaled before it takes the name of the
/// first feature that opens it) and the function are added where they are missing.
///
/// ## Inbox
/// Any node can send an event to a loop that another owns: ``deliver(_:to:schemaVersion:)`` adds
/// it to an inbox table and notifies the owner, whose ``InboxRelay`` journals it into the loop.
/// The table is the truth; `LISTEN/NOTIFY` only wakes the relay, which also polls.
///
/// An inbox entry keeps the sender's `ServiceContext` across nodes, so that the effects the event
/// causes on the owner show in the sender's trace: ``deliver(_:to:schemaVersion:)`` injects it
/// with the instrument (a bootstrapped tracer writes W3C `traceparent` and `tracestate`), the
/// entry stores those headers, and the relay extracts them and sends the event in that context.
/// With no instrument bootstrapped nothing is stored.
///
/// ## Errors
/// The journal throws `JournalError`: the database's own errors are
/// `JournalError.unavailable(_:)` naming the loop, the operation and the server's message, and a
/// stored value that another tool altered (a column's type, a negative sequence, an event missing
/// below the head) is `JournalError.malformedValue(loop:sequence:column:found:)`.
public final class PostgresJournal: EventJournal {
    /// The client the journal queries through; it must be running (`client.run()`, or in a
    /// `ServiceGroup`).
    public let client: PostgresClient
    /// This node's name in lease rows: acquiring a loop this node already owns takes it at once.
    public let node: String
    /// How long a lease lasts after it is taken or renewed, on the database's clock.
    public let leaseDuration: Duration
    /// How long an operation waits for a connection from ``client``, connecting included, before
    /// it throws `JournalError.unavailable(_:)`.
    public let connectionTimeout: Duration
    /// The longest a statement of the journal runs before the server cancels it (the
    /// `statement_timeout` of the sessions it uses; see "Fencing" above); lock waits and idle
    /// moments inside the journal's transactions are ended after half of it. Shorter than
    /// ``leaseDuration``.
    public let statementTimeout: Duration
    /// What the journal deletes when it writes a snapshot; `nil` keeps every event and the
    /// latest snapshot.
    public let retention: JournalRetention?
    let logger: Logger
    /// The instrument that carries `ServiceContext` through the inbox; `nil`: the bootstrapped one.
    let instrument: (any Instrument)?
    let migrated = MigrationGate()
    /// ``statementTimeout`` in whole milliseconds, as PostgreSQL's settings take it (at least 1:
    /// 0 would turn them off).
    let statementMilliseconds: Int64

    /// The channel of inbox notifications; the payload is the loop's id.
    public static let inboxChannel = "feedbackloop_inbox"

    /// A journal on `client`, for the node named `node`.
    ///
    /// - Parameters:
    ///   - client: A running `PostgresClient`.
    ///   - node: This node's name; unique among the nodes sharing the database.
    ///   - leaseDuration: How long a lease lasts without renewal. Default: 10 seconds.
    ///   - connectionTimeout: How long an operation waits for a connection. Default: 5 seconds.
    ///   - statementTimeout: How long a statement of the journal may run (a lock wait or an idle
    ///     moment inside one of its transactions, half of it); shorter than `leaseDuration`.
    ///     Default: half of `leaseDuration`, at most 2 seconds.
    ///   - retention: What to delete when a snapshot is written, in the append's transaction (so
    ///     fenced like it); see `JournalRetention`. Default: `nil`, every event is kept. Keep its
    ///     `maximumEventsPrunedPerAppend` small enough to delete within `statementTimeout`.
    ///   - logger: Where queries are logged (at the client's levels).
    ///   - instrument: The instrument that injects a sender's `ServiceContext` into an inbox
    ///     entry and extracts it on the owner (see Inbox above). Default: `nil`, whichever
    ///     `InstrumentationSystem` has bootstrapped when an event is delivered or relayed.
    public init(
        client: PostgresClient, node: String, leaseDuration: Duration = .seconds(10),
        connectionTimeout: Duration = .seconds(5), statementTimeout: Duration? = nil,
        retention: JournalRetention? = nil,
        logger: Logger = Logger(label: "FeedbackLoopPostgres"), instrument: (any Instrument)? = nil
    ) {
        precondition(leaseDuration > .zero, "leaseDuration must be positive")
        precondition(connectionTimeout > .zero, "connectionTimeout must be positive")
        let statementTimeout = statementTimeout ?? min(leaseDuration / 2, .seconds(2))
        precondition(
            statementTimeout > .zero && statementTimeout < leaseDuration, "statementTimeout must be positive and shorter than leaseDuration")
        self.client = client
        self.node = node
        self.leaseDuration = leaseDuration
        self.connectionTimeout = connectionTimeout
        self.statementTimeout = statementTimeout
        self.retention = retention
        self.logger = logger
        self.instrument = instrument
        let (seconds, attoseconds) = statementTimeout.components
        self.statementMilliseconds = max(1, seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }

    /// A client configuration from a `postgres://user:password@host:port/database` URL (TLS off:
    /// for loopback and private networks; build the configuration yourself for TLS).
    ///
    /// - Parameters:
    ///   - url: Where the database is.
    ///   - connectTimeout: How long one attempt to connect may take. Default: 5 seconds.
    /// - Throws: `JournalError.unavailable(_:)` naming what the URL lacks.
    public static func configuration(url: String, connectTimeout: Duration = .seconds(5)) throws -> PostgresClient.Configuration {
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? "") else {
            throw JournalError.unavailable("'\(url)' is not a postgres:// URL")
        }
        guard let host = components.host, !host.isEmpty else { throw JournalError.unavailable("'\(url)' names no host") }
        guard let user = components.user, !user.isEmpty else { throw JournalError.unavailable("'\(url)' names no user") }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        var configuration = PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: user, password: components.password,
            database: database.isEmpty ? nil : database, tls: .disable)
        configuration.options.connectTimeout = connectTimeout
        return configuration
    }

    /// Checks that the database answers: one round trip (`SELECT 1`) on a connection of
    /// ``client``, connecting included.
    ///
    /// It answers within `timeout` whatever the database does — refuses connections, accepts
    /// them and never speaks, or stops answering in the middle — so that a health endpoint can
    /// call it on every probe. It creates nothing and takes no lease.
    ///
    /// - Parameter timeout: The longest the check may take. Default: 2 seconds.
    /// - Returns: How long the check took.
    /// - Throws: `JournalError.unavailable(_:)` saying what failed: no connection within
    ///   `timeout`, no answer on the connection within it, or the server's error.
    ///   `CancellationError` when the calling task is cancelled.
    @discardableResult
    public func checkHealth(timeout: Duration = .seconds(2)) async throws -> Duration {
        let client = self.client, logger = self.logger
        let start = ContinuousClock.now
        let connected = Mutex(false)
        let expired: @Sendable () -> any Error = {
            NoAnswer(
                connected.withLock { $0 }
                    ? "connected, but PostgreSQL did not answer within \(timeout)"
                    : "no connection to PostgreSQL within \(timeout) (unreachable, or every connection of the client busy)")
        }
        do {
            try await Deadline.run(timeout, expired: expired) { _ in
                try await client.withConnection { connection in
                    connected.withLock { $0 = true }
                    try await JournalConnection(connection: connection, logger: logger).execute("SELECT 1")
                }
            }
        } catch {
            throw Self.journalError(error, loop: nil, operation: "health check")
        }
        return start.duration(to: .now)
    }

    var leaseSeconds: Double {
        Double(leaseDuration.components.seconds) + Double(leaseDuration.components.attoseconds) / 1e18
    }

    /// Creates the tables and the commit-time lease check once per journal (concurrent creators
    /// are serialised by an advisory lock).
    func migrate() async throws {
        // Creating the tables waits for the other nodes' migrations; it touches no lease row.
        let bound = max(statementMilliseconds, 10_000)
        try await migrated.once { [self] in
            // The append function is created last, in the same transaction as the rest: where it
            // exists, everything does. Looked for before the lock, so that no node queues for it
            // once the schema is there, and after it, so that the nodes that queued while the
            // first migrated leave at once. A schema of an earlier version lacks it, and gets
            // what it lacks.
            let isMigrated: @Sendable (JournalConnection) async throws -> Bool = { db in
                try await db.rows("SELECT to_regprocedure('\(unescaped: Self.appendFunction)') IS NOT NULL").first?.decode(Bool.self) == true
            }
            if try await withConnection(isMigrated) { return }
            try await transaction(bound: bound) { db in
                try await db.execute("SELECT pg_advisory_xact_lock(7401735)")
                if try await isMigrated(db) { return }
                try await db.execute("""
                    CREATE TABLE IF NOT EXISTS feedbackloop_leases (
                        loop TEXT PRIMARY KEY, owner TEXT NOT NULL, epoch BIGINT NOT NULL,
                        head BIGINT NOT NULL, lease_until TIMESTAMPTZ NOT NULL)
                    """)
                // The feature that journals each loop; NULL in a row made before it was
                // recorded, until a loop opens it.
                try await db.execute("ALTER TABLE feedbackloop_leases ADD COLUMN IF NOT EXISTS feature TEXT")
                try await db.execute("""
                    CREATE TABLE IF NOT EXISTS feedbackloop_events (
                        loop TEXT NOT NULL, sequence BIGINT NOT NULL, schema_version INT NOT NULL,
                        payload BYTEA NOT NULL, PRIMARY KEY (loop, sequence))
                    """)
                try await db.execute("""
                    CREATE TABLE IF NOT EXISTS feedbackloop_snapshots (
                        loop TEXT NOT NULL, sequence BIGINT NOT NULL, schema_version INT NOT NULL,
                        payload BYTEA NOT NULL, PRIMARY KEY (loop, sequence))
                    """)
                try await db.execute("""
                    CREATE TABLE IF NOT EXISTS feedbackloop_inbox (
                        id BIGSERIAL PRIMARY KEY, loop TEXT NOT NULL, schema_version INT NOT NULL,
                        payload BYTEA NOT NULL)
                    """)
                try await db.execute(
                    "CREATE INDEX IF NOT EXISTS feedbackloop_inbox_loop ON feedbackloop_inbox (loop, id)")
                // The sender's ServiceContext as the instrument's headers (a JSON object), or NULL;
                // added to tables made before it existed.
                try await db.execute("ALTER TABLE feedbackloop_inbox ADD COLUMN IF NOT EXISTS trace_headers TEXT")
                // The statement's check of the lease is as old as the statement; this one runs
                // when the transaction commits, however long after its statements that is.
                try await db.execute("""
                    CREATE OR REPLACE FUNCTION feedbackloop_lease_live() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                        IF NEW.lease_until <= clock_timestamp() THEN
                            RAISE EXCEPTION 'the lease ended at %, before this append could commit', NEW.lease_until
                                USING ERRCODE = 'check_violation', CONSTRAINT = '\(unescaped: Self.leaseLiveConstraint)';
                        END IF;
                        RETURN NULL;
                    END $$
                    """)
                let hasTrigger = try await db.rows("""
                    SELECT 1 FROM pg_trigger
                    WHERE tgname = '\(unescaped: Self.leaseLiveConstraint)' AND tgrelid = to_regclass('feedbackloop_leases')
                    """).count == 1
                if !hasTrigger {
                    try await db.execute("""
                        CREATE CONSTRAINT TRIGGER \(unescaped: Self.leaseLiveConstraint)
                            AFTER UPDATE OF head ON feedbackloop_leases DEFERRABLE INITIALLY DEFERRED
                            FOR EACH ROW EXECUTE FUNCTION feedbackloop_lease_live()
                        """)
                }
                try await db.execute(Self.createAppendFunction)
            }
        }
    }

    /// The name of the commit-time lease check, in the error it raises.
    static let leaseLiveConstraint = "feedbackloop_lease_live"

    /// The server-side append's signature.
    static let appendFunction = "feedbackloop_append(text,bigint,bigint,bigint,bigint[],integer[],bytea[],bigint,integer,bytea,integer,bigint,bigint,text)"

    /// An append in one statement, so one round trip: it moves the lease row's head only where
    /// the epoch owns a live lease and the events continue it, then writes the events, the
    /// snapshot and the prune of `JournalRetention` — or, when the head did not move, writes
    /// nothing and answers with the lease row as it is, for the caller to say why.
    ///
    /// `keep` is `snapshotsKept` (NULL: no policy, only the latest snapshot is kept), `most` is
    /// `maximumEventsPrunedPerAppend`, and no event from `archived` on is pruned. `lock_timeout`
    /// is set first, local to the statement's transaction, so that the wait for a lease row that
    /// a takeover holds is bounded; the statement as a whole is bounded by its session's
    /// `statement_timeout`, which a function cannot arm for the statement that calls it (see
    /// ``withConnection(_:)``). Called as its own (implicit) transaction; the commit-time lease
    /// check runs at the end of the statement, which the commit follows at once.
    static let createAppendFunction: PostgresQuery = """
        CREATE OR REPLACE FUNCTION feedbackloop_append(
            the_loop TEXT, the_epoch BIGINT, the_head BIGINT, the_last BIGINT,
            sequences BIGINT[], versions INT[], payloads BYTEA[],
            snapshot_sequence BIGINT, snapshot_version INT, snapshot_payload BYTEA,
            keep INT, most BIGINT, archived BIGINT, lock_wait TEXT)
        RETURNS TABLE (moved BOOLEAN, stored_epoch BIGINT, stored_head BIGINT, live BOOLEAN)
        LANGUAGE plpgsql AS $$
        DECLARE
            oldest_kept BIGINT;
        BEGIN
            PERFORM set_config('lock_timeout', lock_wait, true);
            UPDATE feedbackloop_leases SET head = the_last
            WHERE loop = the_loop AND epoch = the_epoch AND lease_until > clock_timestamp() AND head = the_head;
            IF NOT FOUND THEN
                RETURN QUERY SELECT false, l.epoch, l.head, l.lease_until > clock_timestamp()
                    FROM feedbackloop_leases AS l WHERE l.loop = the_loop;
                RETURN;
            END IF;
            INSERT INTO feedbackloop_events (loop, sequence, schema_version, payload)
                SELECT the_loop, e.* FROM UNNEST(sequences, versions, payloads) AS e;
            IF snapshot_sequence IS NOT NULL THEN
                INSERT INTO feedbackloop_snapshots (loop, sequence, schema_version, payload)
                    VALUES (the_loop, snapshot_sequence, snapshot_version, snapshot_payload)
                    ON CONFLICT (loop, sequence) DO UPDATE SET schema_version = EXCLUDED.schema_version, payload = EXCLUDED.payload;
                IF keep IS NULL THEN
                    DELETE FROM feedbackloop_snapshots WHERE loop = the_loop AND sequence < snapshot_sequence;
                ELSE
                    SELECT sequence INTO oldest_kept FROM feedbackloop_snapshots
                        WHERE loop = the_loop ORDER BY sequence DESC OFFSET keep - 1 LIMIT 1;
                    IF FOUND THEN
                        DELETE FROM feedbackloop_snapshots WHERE loop = the_loop AND sequence < oldest_kept;
                        DELETE FROM feedbackloop_events WHERE loop = the_loop AND sequence < LEAST(oldest_kept,
                            (SELECT min(sequence) FROM feedbackloop_events WHERE loop = the_loop) + most, archived);
                    END IF;
                END IF;
            END IF;
            -- The lease is checked now, in the statement, rather than when its transaction
            -- commits: an error after the statement's answer, at the protocol's Sync, would not
            -- reach postgres-nio's caller, who would take a rolled-back append for a durable one.
            SET CONSTRAINTS ALL IMMEDIATE;
            RETURN QUERY SELECT true, the_epoch, the_last, true;
        END $$
        """

    /// Takes the loop's lease row when it is free, expired or this node's, without recording or
    /// checking a feature (see ``acquire(loop:feature:)``).
    ///
    /// - Throws: `JournalError.ownedElsewhere(loop:)` when another node's lease is live, or when
    ///   another transaction has held the lease row for half of ``statementTimeout`` (its owner
    ///   paused in the middle of an append, say); `JournalError.unavailable(_:)` when the database
    ///   failed.
    public func acquire(loop: String) async throws -> UInt64 {
        try await take(loop, feature: nil)
    }

    /// Takes the loop's lease row for `feature` when it is free, expired or this node's: the
    /// row records `feature` the first time (or when it was made before features were recorded),
    /// and a row that records another refuses, in the same statement, so no epoch is taken.
    ///
    /// - Throws: `DurableLoopError.featureMismatch(loop:journaled:opening:)` when another
    ///   feature journaled the loop; the errors of ``acquire(loop:)``.
    public func acquire(loop: String, feature: String) async throws -> UInt64 {
        try await take(loop, feature: feature)
    }

    func take(_ loop: String, feature: String?) async throws -> UInt64 {
        try await operation("acquire", loop: loop) { [self] in
            try await migrate()
            let node = self.node, seconds = leaseSeconds
            do {
                return try await transaction { db in
                    let rows = try await db.rows("""
                        INSERT INTO feedbackloop_leases (loop, owner, epoch, head, lease_until, feature)
                        VALUES (\(loop), \(node), 1, 0, now() + make_interval(secs => \(seconds)), \(feature))
                        ON CONFLICT (loop) DO UPDATE SET owner = EXCLUDED.owner, epoch = feedbackloop_leases.epoch + 1,
                            lease_until = EXCLUDED.lease_until, feature = coalesce(feedbackloop_leases.feature, EXCLUDED.feature)
                        WHERE (feedbackloop_leases.lease_until < now() OR feedbackloop_leases.owner = EXCLUDED.owner)
                            AND (EXCLUDED.feature IS NULL OR feedbackloop_leases.feature IS NULL OR feedbackloop_leases.feature = EXCLUDED.feature)
                        RETURNING epoch
                        """)
                    if let row = rows.first {
                        return try StoredRow(row, loop: loop, table: "feedbackloop_leases").unsigned(0, atLeast: 1)
                    }
                    if let feature {
                        for row in try await db.rows("SELECT feature FROM feedbackloop_leases WHERE loop = \(loop)") {
                            if let journaled = try StoredRow(row, loop: loop, table: "feedbackloop_leases").optionalText(0), journaled != feature {
                                throw DurableLoopError.featureMismatch(loop: loop, journaled: journaled, opening: feature)
                            }
                        }
                    }
                    throw JournalError.ownedElsewhere(loop: loop)
                }
            } catch let error where Self.sqlState(error) == Self.lockNotAvailable {
                throw JournalError.ownedElsewhere(loop: loop)
            }
        }
    }

    /// Extends the lease taken with `epoch` by ``leaseDuration`` from now (the database's).
    ///
    /// - Throws: `JournalError.fenced(loop:epoch:)` when the lease has expired or
    ///   another owner holds the loop; `JournalError.unavailable(_:)` when the database failed.
    public func renew(loop: String, epoch: UInt64) async throws {
        try await operation("renew", loop: loop) { [self] in
            let owner = try Self.bigint(epoch, "epoch"), seconds = leaseSeconds
            // One statement, no transaction: it holds the row only while it runs, and waits for
            // it only as long as the journal's bounded transactions can hold it.
            let renewed = try await withConnection { db in
                let rows = try await db.rows("""
                    UPDATE feedbackloop_leases SET lease_until = now() + make_interval(secs => \(seconds))
                    WHERE loop = \(loop) AND epoch = \(owner) AND lease_until > now() RETURNING epoch
                    """)
                return !rows.isEmpty
            }
            if !renewed { throw JournalError.fenced(loop: loop, epoch: epoch) }
        }
    }

    public func release(loop: String, epoch: UInt64) async throws {
        try await operation("release", loop: loop) { [self] in
            let owner = try Self.bigint(epoch, "epoch")
            try await withConnection { db in
                try await db.execute("""
                    UPDATE feedbackloop_leases SET lease_until = now() - interval '1 second'
                    WHERE loop = \(loop) AND epoch = \(owner)
                    """)
            }
        }
    }

    public func latestSnapshot(loop: String) async throws -> JournalRecord? {
        try await operation("reading the latest snapshot", loop: loop) { [self] in
            try await migrate()
            return try await withConnection { db in
                let rows = try await db.rows("""
                    SELECT sequence, schema_version, payload FROM feedbackloop_snapshots
                    WHERE loop = \(loop) ORDER BY sequence DESC LIMIT 1
                    """)
                for row in rows { return try Self.record(StoredRow(row, loop: loop, table: "feedbackloop_snapshots")) }
                return nil
            }
        }
    }

    public func events(loop: String, after sequence: UInt64, limit: Int) async throws -> [JournalRecord] {
        try await operation("reading events", loop: loop) { [self] in
            try await migrate()
            let after = try Self.bigint(sequence, "sequence"), limit = Int64(max(limit, 0))
            return try await withConnection { db in
                // The head comes in the same statement, so in the same snapshot as the events.
                let rows = try await db.rows("""
                    SELECT e.sequence, e.schema_version, e.payload, l.head
                    FROM feedbackloop_leases AS l LEFT JOIN LATERAL (
                        SELECT sequence, schema_version, payload FROM feedbackloop_events
                        WHERE loop = \(loop) AND sequence > \(after) ORDER BY sequence LIMIT \(limit)
                    ) AS e ON true
                    WHERE l.loop = \(loop) ORDER BY e.sequence
                    """)
                var records: [JournalRecord] = []
                var head: UInt64 = 0
                for row in rows {
                    head = try StoredRow(row, loop: loop, table: "feedbackloop_leases").unsigned(3, atLeast: 0)
                    let event = StoredRow(row, loop: loop, table: "feedbackloop_events")
                    if !event.isNull(0) { records.append(try Self.record(event)) }
                }
                // The last page must reach the head: an event renumbered out of reach (a negative
                // sequence) or deleted would otherwise be skipped without a word.
                let last = records.last?.sequence ?? sequence
                if records.count < limit, head > last {
                    throw StoredRow(rows[0], loop: loop, table: "feedbackloop_events", sequence: last + 1).malformed(
                        column: "sequence", found: "has no row for event \(last + 1), though feedbackloop_leases.head is \(head)")
                }
                return records
            }
        }
    }

    /// Appends `events` and `snapshot` in one transaction, fenced by `epoch` and by the lease:
    /// see "Fencing" above for what it guarantees when its owner pauses.
    ///
    /// - Throws: `JournalError.fenced(loop:epoch:)` when `epoch` no longer owns the loop or its
    ///   lease ended before the commit; `JournalError.sequenceConflict(loop:expected:found:)`;
    ///   `JournalError.unavailable(_:)` when the database failed. Nothing is written when it
    ///   throws, except when the connection was lost after the commit was sent: the append may
    ///   then have committed, and recovery finds it.
    public func append(loop: String, epoch: UInt64, events: [JournalRecord], snapshot: JournalRecord?) async throws {
        guard let first = events.first?.sequence else { return }
        try await operation("append", loop: loop) { [self] in
            for (offset, record) in events.enumerated() where record.sequence != first &+ UInt64(offset) {
                throw JournalError.sequenceConflict(loop: loop, expected: first &+ UInt64(offset), found: record.sequence)
            }
            let owner = try Self.bigint(epoch, "epoch")
            let last = try Self.bigint(events[events.count - 1].sequence, "sequence")
            let head = try Self.bigint(first, "sequence") - 1
            let sequences = events.map { Int64($0.sequence) }
            let versions = try events.map { try Self.int(exactly: $0.schemaVersion) }
            let payloads = events.map { ByteBuffer(bytes: $0.payload) }
            // With an archive, the events the prune will delete are handed to it first, outside
            // the transaction (which holds the lease row), and the prune deletes none past them.
            var archivedThrough: Int64?
            if let snapshot, let retention, let archive = retention.archive {
                let (snapshots, firstStored) = try await withConnection { db in
                    var snapshots: [UInt64] = []
                    for row in try await db.rows("SELECT sequence FROM feedbackloop_snapshots WHERE loop = \(loop)") {
                        snapshots.append(try StoredRow(row, loop: loop, table: "feedbackloop_snapshots").sequence(0))
                    }
                    var first: UInt64?
                    for row in try await db.rows("SELECT min(sequence) FROM feedbackloop_events WHERE loop = \(loop)") {
                        let stored = StoredRow(row, loop: loop, table: "feedbackloop_events")
                        if !stored.isNull(0) { first = try stored.sequence(0) }
                    }
                    return (snapshots, first)
                }
                archivedThrough = try await retention.archiveBeforePruning(
                    archive, loop: loop, snapshot: snapshot.sequence, appended: events, storedSnapshots: snapshots,
                    firstStoredEvent: firstStored, readStored: { after, limit in try await self.events(loop: loop, after: after, limit: limit) }
                ).map { try Self.bigint($0, "sequence") }
            }
            let snapshotSequence = try snapshot.map { try Self.bigint($0.sequence, "snapshot sequence") }
            let snapshotVersion = try snapshot.map { try Self.int(exactly: $0.schemaVersion) }
            let snapshotPayload = snapshot.map { ByteBuffer(bytes: $0.payload) }
            let keep = retention.map { Int32(clamping: $0.snapshotsKept) }
            let most = retention.map { Int64(clamping: $0.maximumEventsPrunedPerAppend) }
            // Past every sequence: no bound but the others.
            let archived = retention?.archive == nil ? Int64.max : (archivedThrough.map { $0 + 1 } ?? 0)
            let lockWait = "\(max(1, statementMilliseconds / 2))"
            do {
                // One statement, its own transaction (see `createAppendFunction`): one round trip.
                let answer = try await withConnection { db in
                    try await db.rows("""
                        SELECT moved, stored_epoch AS epoch, stored_head AS head, live FROM feedbackloop_append(\(loop), \(owner), \(head), \(last),
                            \(sequences)::BIGINT[], \(versions)::INT[], \(payloads)::BYTEA[],
                            \(snapshotSequence)::BIGINT, \(snapshotVersion)::INT, \(snapshotPayload)::BYTEA,
                            \(keep)::INT, \(most)::BIGINT, \(archived)::BIGINT, \(lockWait))
                        """)
                }
                // Refused (no row: the loop has no lease row): say whether for the epoch or the sequence.
                guard let row = answer.first else { throw JournalError.fenced(loop: loop, epoch: epoch) }
                let lease = StoredRow(row, loop: loop, table: "feedbackloop_leases")
                if try lease.bool(0) { return }
                if try lease.integer(1) == owner, try lease.bool(3) {
                    throw JournalError.sequenceConflict(loop: loop, expected: try lease.unsigned(2, atLeast: 0) + 1, found: first)
                }
                throw JournalError.fenced(loop: loop, epoch: epoch)
            } catch let error as PSQLError where error.serverInfo?[.constraintName] == Self.leaseLiveConstraint {
                throw JournalError.fenced(loop: loop, epoch: epoch)
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
        let headers = InboxHeaders.inject(ServiceContext.current, with: instrument ?? InstrumentationSystem.instrument)
        try await operation("delivering an event", loop: loop) { [self] in
            try await migrate()
            let version = try Self.int(exactly: schemaVersion)
            try await transaction { db in
                try await db.execute("""
                    INSERT INTO feedbackloop_inbox (loop, schema_version, payload, trace_headers)
                    VALUES (\(loop), \(version), \(payload), \(headers))
                    """)
                // Delivered on commit only: a rolled-back delivery never wakes anyone.
                try await db.execute("SELECT pg_notify(\(Self.inboxChannel), \(loop))")
            }
        }
    }

    /// Up to `limit` inbox entries of `loop`, oldest first, each with the sender's trace headers
    /// (see ``InboxHeaders``).
    func inbox(loop: String, limit: Int) async throws -> [(id: Int64, record: JournalRecord, headers: String?)] {
        try await operation("reading the inbox", loop: loop) { [self] in
            let limit = Int64(max(limit, 0))
            return try await withConnection { db in
                let rows = try await db.rows("""
                    SELECT id, schema_version, payload, trace_headers FROM feedbackloop_inbox
                    WHERE loop = \(loop) ORDER BY id LIMIT \(limit)
                    """)
                var entries: [(id: Int64, record: JournalRecord, headers: String?)] = []
                for row in rows {
                    let entry = StoredRow(row, loop: loop, table: "feedbackloop_inbox")
                    let record = JournalRecord(sequence: 0, schemaVersion: try entry.schemaVersion(1), payload: try entry.bytes(2))
                    entries.append((try entry.integer(0), record, try entry.optionalText(3)))
                }
                return entries
            }
        }
    }

    /// The sender's context, from an inbox entry's stored headers.
    func context(fromInbox headers: String?) -> InboxHeaders.Extracted {
        InboxHeaders.extract(headers, with: instrument ?? InstrumentationSystem.instrument)
    }

    func removeFromInbox(_ id: Int64) async throws {
        try await operation("removing inbox entry \(id)", loop: nil) { [self] in
            try await withConnection { db in
                try await db.execute("DELETE FROM feedbackloop_inbox WHERE id = \(id)")
            }
        }
    }

    /// The record in a row that starts with `sequence, schema_version, payload`.
    static func record(_ row: StoredRow) throws -> JournalRecord {
        let sequence = try row.sequence(0)
        let stored = row.record(sequence)
        return JournalRecord(sequence: sequence, schemaVersion: try stored.schemaVersion(1), payload: try stored.bytes(2))
    }
}

extension PostgresJournal {
    /// Runs `body`, one of the journal's operations on `loop`, with its errors as
    /// ``PostgresJournal/journalError(_:loop:operation:)`` gives them.
    func operation<Value>(_ name: String, loop: String?, _ body: () async throws -> Value) async throws -> Value {
        do {
            return try await body()
        } catch let error where Self.isStatementTimeout(error) {
            // Each of the journal's operations is one transaction, which the cancelled statement
            // rolled back.
            let place = loop.map { "journal of loop '\($0)'" } ?? "journal"
            throw JournalError.unavailable(
                "\(place): \(name) failed: a statement ran for longer than statementTimeout (\(statementTimeout)) and the server "
                    + "cancelled it, so nothing was written: \(Self.describe(error))")
        } catch {
            throw Self.journalError(error, loop: loop, operation: name)
        }
    }

    /// Runs `body` on a connection of ``client``, waiting at most ``connectionTimeout`` for it
    /// (see ``Deadline``: once it has its connection, `body` runs to its end).
    ///
    /// The connection's session has `statement_timeout` at ``statementTimeout``, set once per
    /// connection (see ``SessionBounds``): every statement of the journal is bounded, the
    /// append's one statement among them, without a round trip more per operation.
    func withConnection<Value: Sendable>(_ body: @escaping @Sendable (JournalConnection) async throws -> Value) async throws -> Value {
        let client = self.client, logger = self.logger, timeout = connectionTimeout, bound = statementMilliseconds
        let expired: @Sendable () -> any Error = {
            NoAnswer("no connection to PostgreSQL within \(timeout) (unreachable, or every connection of the client busy)")
        }
        return try await Deadline.run(timeout, expired: expired) { deadline in
            try await client.withConnection { connection in
                guard deadline.disarm() else { throw CancellationError() }
                let db = JournalConnection(connection: connection, logger: logger)
                if !SessionBounds.shared.isArmed(connection, at: bound) {
                    try await db.execute("SELECT set_config('statement_timeout', \("\(bound)"), false)")
                    SessionBounds.shared.arm(connection, at: bound)
                }
                return try await body(db)
            }
        }
    }

    /// Runs `body` in a transaction that the server ends when one of its statements runs for
    /// longer than ``statementTimeout`` (or `milliseconds`), or waits for a lock or is left idle
    /// between two statements for half of it: a paused owner cannot hold rows, the lease row
    /// above all, for longer.
    func transaction<Value: Sendable>(
        bound milliseconds: Int64? = nil, _ body: @escaping @Sendable (JournalConnection) async throws -> Value
    ) async throws -> Value {
        let statement = milliseconds ?? statementMilliseconds
        // Shorter than the statement's bound, so that a lock wait ends as a lock timeout: for a
        // takeover, another owner's transaction holding the lease row.
        let wait = "\(max(1, statement / 2))", bound = "\(statement)"
        return try await withConnection { db in
            try await db.execute("BEGIN")
            do {
                try await db.execute("""
                    SELECT set_config('statement_timeout', \(bound), true), set_config('lock_timeout', \(wait), true),
                        set_config('idle_in_transaction_session_timeout', \(wait), true)
                    """)
                let value = try await body(db)
                try await db.execute("COMMIT")
                return value
            } catch {
                // Its failure is ignored: after a failed COMMIT, or on a session the server ended,
                // there is nothing to roll back.
                try? await db.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// `value` as a `BIGINT`.
    static func bigint(_ value: UInt64, _ what: String) throws -> Int64 {
        guard let bigint = Int64(exactly: value) else { throw JournalError.unavailable("\(what) \(value) is beyond PostgreSQL's BIGINT") }
        return bigint
    }

    /// A schema version as an `INT`.
    static func int(exactly version: Int) throws -> Int32 {
        guard let int = Int32(exactly: version) else { throw JournalError.unavailable("schema version \(version) is beyond PostgreSQL's INT") }
        return int
    }
}

/// A connection in one of the journal's operations: every statement's answer is read to the
/// end, since a statement's error can follow its first rows.
struct JournalConnection: Sendable {
    let connection: PostgresConnection
    let logger: Logger

    func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        // postgres-nio never answers a query written to a connection whose channel has closed
        // (the server ended an idle transaction's session, say): such a query would hang.
        guard !connection.isClosed else { throw PostgresJournal.NoAnswer("the connection to PostgreSQL was closed") }
        var rows: [PostgresRow] = []
        for try await row in try await connection.query(query, logger: logger) { rows.append(row) }
        return rows
    }

    func execute(_ query: PostgresQuery) async throws {
        _ = try await rows(query)
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
#endif
