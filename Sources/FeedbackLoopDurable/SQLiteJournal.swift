import Foundation
import GRDB

/// The embedded ``EventJournal``: one SQLite file, nothing to set up.
///
/// ```swift
/// let journal = try SQLiteJournal(path: "/var/lib/orders/journal.sqlite")
/// ```
///
/// Many loops share one file, each keyed by its id. The file is in WAL mode; each
/// ``append(loop:epoch:events:snapshot:)`` is one `IMMEDIATE` transaction, durable when it returns
/// (with ``Synchronous/full``, across a power loss; with ``Synchronous/normal``, across a crash of
/// the process). Only the latest snapshot of a loop is kept.
///
/// Ownership: each ``acquire(loop:)`` bumps the loop's epoch, so the newest owner wins and an
/// older one — another ``DurableLoop`` on the same file, in this process or another — is fenced
/// off at its next append. Several processes may open the same file; a writer waits up to
/// `busyTimeout` for another's transaction.
///
/// Uses GRDB.swift and the system's SQLite (Debian: `libsqlite3-dev`).
public final class SQLiteJournal: EventJournal {
    /// When a transaction is durable.
    public enum Synchronous: String, Sendable, CaseIterable {
        /// `PRAGMA synchronous = FULL`: a committed append survives a power loss (an `fsync` per
        /// transaction).
        case full
        /// `PRAGMA synchronous = NORMAL`: a committed append survives a crash or `kill -9` of the
        /// process, not a power loss (WAL is synced at checkpoints only).
        case normal
    }

    let database: DatabasePool

    /// Opens (or creates) the journal in the SQLite file at `path`.
    ///
    /// - Parameters:
    ///   - path: The database file; created with its tables when missing.
    ///   - synchronous: When a transaction is durable. Default: ``Synchronous/full``.
    ///   - busyTimeout: How long a write waits for another process's transaction.
    /// - Throws: GRDB's `DatabaseError` when the file cannot be opened or is not a database.
    public init(path: String, synchronous: Synchronous = .full, busyTimeout: Duration = .seconds(5)) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(TimeInterval(busyTimeout.components.seconds) + TimeInterval(busyTimeout.components.attoseconds) / 1e18)
        configuration.label = "FeedbackLoopDurable.SQLiteJournal"
        let pragma = "PRAGMA synchronous = \(synchronous == .full ? "FULL" : "NORMAL")"
        configuration.prepareDatabase { db in try db.execute(sql: pragma) }
        database = try DatabasePool(path: path, configuration: configuration)
        try database.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS feedbackloop_loops (
                    loop TEXT PRIMARY KEY, epoch INTEGER NOT NULL, head INTEGER NOT NULL) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS feedbackloop_events (
                    loop TEXT NOT NULL, sequence INTEGER NOT NULL, schema_version INTEGER NOT NULL,
                    payload BLOB NOT NULL, PRIMARY KEY (loop, sequence)) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS feedbackloop_snapshots (
                    loop TEXT NOT NULL, sequence INTEGER NOT NULL, schema_version INTEGER NOT NULL,
                    payload BLOB NOT NULL, PRIMARY KEY (loop, sequence)) WITHOUT ROWID;
                """)
        }
    }

    public func acquire(loop: String) async throws -> UInt64 {
        try await database.write { db in
            let epoch = try Int64.fetchOne(db, sql: """
                INSERT INTO feedbackloop_loops (loop, epoch, head) VALUES (?, 1, 0)
                ON CONFLICT (loop) DO UPDATE SET epoch = epoch + 1 RETURNING epoch
                """, arguments: [loop])
            guard let epoch else { throw JournalError.unavailable("acquiring '\(loop)' returned no epoch") }
            return UInt64(epoch)
        }
    }

    /// Does nothing: a SQLite journal has no lease to give back; the next ``acquire(loop:)``
    /// takes the loop at once.
    public func release(loop: String, epoch: UInt64) async throws {}

    public func latestSnapshot(loop: String) async throws -> JournalRecord? {
        try await database.read { db in
            try Row.fetchOne(db, sql: """
                SELECT sequence, schema_version, payload FROM feedbackloop_snapshots
                WHERE loop = ? ORDER BY sequence DESC LIMIT 1
                """, arguments: [loop]).map(Self.record)
        }
    }

    public func events(loop: String, after sequence: UInt64, limit: Int) async throws -> [JournalRecord] {
        try await database.read { db in
            try Row.fetchAll(db, sql: """
                SELECT sequence, schema_version, payload FROM feedbackloop_events
                WHERE loop = ? AND sequence > ? ORDER BY sequence LIMIT ?
                """, arguments: [loop, Int64(sequence), limit]).map(Self.record)
        }
    }

    public func append(loop: String, epoch: UInt64, events: [JournalRecord], snapshot: JournalRecord?) async throws {
        guard let first = events.first?.sequence else { return }
        for (offset, record) in events.enumerated() where record.sequence != first + UInt64(offset) {
            throw JournalError.sequenceConflict(loop: loop, expected: first + UInt64(offset), found: record.sequence)
        }
        let last = first + UInt64(events.count) - 1
        try await database.write { db in
            try db.execute(
                sql: "UPDATE feedbackloop_loops SET head = ? WHERE loop = ? AND epoch = ? AND head = ?",
                arguments: [Int64(last), loop, Int64(epoch), Int64(first) - 1])
            if db.changesCount != 1 {
                let row = try Row.fetchOne(db, sql: "SELECT epoch, head FROM feedbackloop_loops WHERE loop = ?", arguments: [loop])
                guard let row, row["epoch"] as Int64 == Int64(epoch) else {
                    throw JournalError.fenced(loop: loop, epoch: epoch)
                }
                throw JournalError.sequenceConflict(loop: loop, expected: UInt64(row["head"] as Int64) + 1, found: first)
            }
            let insert = try db.cachedStatement(
                sql: "INSERT INTO feedbackloop_events (loop, sequence, schema_version, payload) VALUES (?, ?, ?, ?)")
            for record in events {
                try insert.execute(arguments: [loop, Int64(record.sequence), record.schemaVersion, Data(record.payload)])
            }
            if let snapshot {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO feedbackloop_snapshots (loop, sequence, schema_version, payload) VALUES (?, ?, ?, ?)",
                    arguments: [loop, Int64(snapshot.sequence), snapshot.schemaVersion, Data(snapshot.payload)])
                try db.execute(
                    sql: "DELETE FROM feedbackloop_snapshots WHERE loop = ? AND sequence < ?",
                    arguments: [loop, Int64(snapshot.sequence)])
            }
        }
    }

    private static func record(_ row: Row) -> JournalRecord {
        JournalRecord(
            sequence: UInt64(row["sequence"] as Int64),
            schemaVersion: row["schema_version"],
            payload: [UInt8](row["payload"] as Data))
    }
}
