#if Durable
import Foundation
import GRDB

/// The embedded ``EventJournal``: one SQLite file, nothing to set up.
///
/// ```swift
/// let journal = try SQLiteJournal(path: "/var/lib/orders/journal.sqlite")
/// ```
///
/// Many loops share one file, each keyed by its id (an id with a NUL character is refused: SQLite
/// would cut it short at the NUL, into another loop's id). The file is in WAL mode; each
/// ``append(loop:epoch:events:snapshot:)`` is one `IMMEDIATE` transaction, durable when it returns
/// (with ``Synchronous/full``, across a power loss; with ``Synchronous/normal``, across a crash of
/// the process). Without a ``retention`` policy, every event and the latest snapshot of a loop are
/// kept; with one, the newest snapshots and the events from the oldest of them on.
///
/// Each loop's row records the feature that journals it (see ``acquire(loop:feature:)``); a file
/// written before features were recorded gets the column when it is opened, and each of its
/// loops takes the name of the first feature that opens it.
///
/// Ownership: each ``acquire(loop:)`` bumps the loop's epoch, so the newest owner wins and an
/// older one — another ``DurableLoop`` on the same file, in this process or another — is fenced
/// off at its next append. Several processes may open the same file; a writer waits up to
/// `busyTimeout` for another's transaction.
///
/// Uses GRDB.swift and the system's SQLite (Debian: `libsqlite3-dev`).
public final class SQLiteJournal: BrowsableJournal {
    /// When a transaction is durable.
    public enum Synchronous: String, Sendable, CaseIterable {
        /// `PRAGMA synchronous = FULL`: a committed append survives a power loss (an `fsync` per
        /// transaction).
        case full
        /// `PRAGMA synchronous = NORMAL`: a committed append survives a crash or `kill -9` of the
        /// process, not a power loss (WAL is synced at checkpoints only).
        case normal
    }

    /// The file: a pool in WAL mode, or, for a damaged file, one read-only connection.
    let database: any DatabaseWriter
    /// Why the file was opened only for reading: SQLite found it damaged (truncated, say) when
    /// the journal opened it. `nil` for a sound file.
    let damage: String?
    /// What the journal deletes when it writes a snapshot; `nil` deletes no event.
    public let retention: JournalRetention?

    /// Opens (or creates) the journal in the SQLite file at `path`.
    ///
    /// A file SQLite finds damaged when opening it — truncated by a copy cut short or a full
    /// disk, most often — opens only for reading, so that the loop that takes it reports which of
    /// its records survived: its ``acquire(loop:feature:)`` throws
    /// ``DurableLoopError/damagedJournal(loop:sequence:reason:)`` naming the loop and its last
    /// event read intact, and nothing is ever written to the file.
    ///
    /// - Parameters:
    ///   - path: The database file; created with its tables when missing. A file of an earlier
    ///     version of this journal gets the columns it lacks.
    ///   - synchronous: When a transaction is durable. Default: ``Synchronous/full``.
    ///   - busyTimeout: How long a write waits for another process's transaction.
    ///   - retention: What to delete when a snapshot is written; see ``JournalRetention``.
    ///     Default: `nil`, every event is kept.
    /// - Throws: ``JournalError/unavailable(_:)`` naming `path` and SQLite's error when the file
    ///   cannot be opened or is not a database.
    public init(
        path: String, synchronous: Synchronous = .full, busyTimeout: Duration = .seconds(5), retention: JournalRetention? = nil
    ) throws {
        self.retention = retention
        var configuration = Configuration()
        configuration.busyMode = .timeout(TimeInterval(busyTimeout.components.seconds) + TimeInterval(busyTimeout.components.attoseconds) / 1e18)
        configuration.label = "FeedbackLoopDurable.SQLiteJournal"
        do {
            let pool = try DatabasePool(path: path, configuration: configuration)
            // After the pool is open: setting up WAL mode, it sets NORMAL on its one writer,
            // after any `prepareDatabase` of the connection's.
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = \(synchronous == .full ? "FULL" : "NORMAL")")
            }
            try pool.write(Self.createTables)
            database = pool
            damage = nil
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT {
            // SQLite refuses a file shorter than its header says; with `writable_schema` it reads
            // the pages there are, and fails at the first missing one.
            configuration.readonly = true
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA writable_schema = ON") }
            do {
                database = try DatabaseQueue(path: path, configuration: configuration)
            } catch let reopening as DatabaseError {
                throw JournalError.unavailable("SQLite journal at '\(path)' is damaged and cannot be read: \(error); \(reopening)")
            }
            damage = "SQLite journal at '\(path)' is damaged: \(error)"
        } catch let error as DatabaseError {
            throw JournalError.unavailable("SQLite journal at '\(path)' cannot be opened: \(error)")
        }
    }

    /// The tables, and the columns added since their first version, in one transaction.
    static func createTables(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS feedbackloop_loops (
                loop TEXT PRIMARY KEY, epoch INTEGER NOT NULL, head INTEGER NOT NULL, feature TEXT) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS feedbackloop_events (
                loop TEXT NOT NULL, sequence INTEGER NOT NULL, schema_version INTEGER NOT NULL,
                payload BLOB NOT NULL, PRIMARY KEY (loop, sequence)) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS feedbackloop_snapshots (
                loop TEXT NOT NULL, sequence INTEGER NOT NULL, schema_version INTEGER NOT NULL,
                payload BLOB NOT NULL, PRIMARY KEY (loop, sequence)) WITHOUT ROWID;
            """)
        // The feature that journals each loop; NULL in a file written before it was recorded,
        // until a loop opens it.
        if try !Row.fetchAll(db, sql: "PRAGMA table_info(feedbackloop_loops)").contains(where: { $0["name"] == "feature" }) {
            try db.execute(sql: "ALTER TABLE feedbackloop_loops ADD COLUMN feature TEXT")
        }
    }

    /// Takes the loop without recording or checking a feature (see ``acquire(loop:feature:)``).
    public func acquire(loop: String) async throws -> UInt64 {
        try await take(loop, feature: nil)
    }

    /// Takes the loop for `feature`, recording it in the loop's row the first time (or when the
    /// row, written before features were recorded, has none) and checking it every other time,
    /// in one transaction: a mismatch takes no epoch.
    ///
    /// The same transaction reads, before it takes the epoch, the pages recovery will read — the
    /// loop's latest snapshot and its events from there on — so that a page SQLite finds damaged
    /// only when it reaches it refuses the loop with
    /// ``DurableLoopError/damagedJournal(loop:sequence:reason:)`` and nothing written. A recovery
    /// therefore reads those rows twice (the second time from the operating system's cache).
    public func acquire(loop: String, feature: String) async throws -> UInt64 {
        try await take(loop, feature: feature)
    }

    func take(_ loop: String, feature: String?) async throws -> UInt64 {
        try Self.refuseCutShort(loop)
        if let feature { try Self.refuseCutShort(feature, what: "feature name") }
        if damage != nil { throw try await damaged(loop) }
        return try await Self.naming(loop, "acquiring it") { try await database.write { db in
            // The stored epoch is read and checked first: SQLite's `epoch + 1` would turn text
            // into 1, handing out an epoch an earlier owner may hold.
            if let row = try Row.fetchOne(db, sql: "SELECT epoch, head, feature FROM feedbackloop_loops WHERE loop = ?", arguments: [loop]) {
                _ = try Self.integer(row, "epoch", in: "feedbackloop_loops", loop: loop, sequence: nil)
                _ = try Self.integer(row, "head", in: "feedbackloop_loops", loop: loop, sequence: nil)
                let stored: DatabaseValue = row["feature"]
                switch stored.storage {
                case .null: break
                case .string(let journaled):
                    if let feature, journaled != feature {
                        throw DurableLoopError.featureMismatch(loop: loop, journaled: journaled, opening: feature)
                    }
                default:
                    throw JournalError.malformedValue(loop: loop, sequence: nil, column: "feedbackloop_loops.feature", found: Self.describe(stored))
                }
                try Self.readWhatRecoveryReads(db, loop: loop)
            }
            let row = try Row.fetchOne(db, sql: """
                INSERT INTO feedbackloop_loops (loop, epoch, head, feature) VALUES (?, 1, 0, ?)
                ON CONFLICT (loop) DO UPDATE SET epoch = epoch + 1, feature = coalesce(feature, excluded.feature) RETURNING epoch
                """, arguments: [loop, feature])
            guard let row else { throw JournalError.unavailable("acquiring '\(loop)' returned no epoch") }
            return UInt64(try Self.integer(row, "epoch", in: "feedbackloop_loops", loop: loop, sequence: nil, minimum: 1))
        } }
    }

    /// Reads, in the acquiring transaction and before it writes, the pages that recovery will
    /// read of `loop` — its latest snapshot and its events from that snapshot's on — so that
    /// damage SQLite finds only when it reaches a page (one overwritten in the middle of the
    /// file, say; a file cut short is found when it opens) refuses the loop with
    /// ``DurableLoopError/damagedJournal(loop:sequence:reason:)`` having written nothing, not even
    /// the epoch. The rows are stepped through, not copied: their values are recovery's to check.
    static func readWhatRecoveryReads(_ db: Database, loop: String) throws {
        var last: UInt64 = 0
        do {
            var after: Int64 = 0
            let snapshot = try Row.fetchOne(
                db, sql: "SELECT sequence, payload FROM feedbackloop_snapshots WHERE loop = ? ORDER BY sequence DESC LIMIT 1",
                arguments: [loop])
            if let snapshot, case .int64(let sequence) = (snapshot[0] as DatabaseValue).storage, sequence > 0 { after = sequence - 1 }
            let events = try Row.fetchCursor(
                db, sql: "SELECT sequence, schema_version, payload FROM feedbackloop_events WHERE loop = ? AND sequence > ? ORDER BY sequence",
                arguments: [loop, after])
            while let row = try events.next() {
                if case .int64(let sequence) = (row[0] as DatabaseValue).storage, sequence > 0 { last = UInt64(sequence) }
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT {
            throw DurableLoopError.damagedJournal(loop: loop, sequence: last, reason: "\(error)")
        }
    }

    /// The error that refuses `loop` in a damaged file: its events are read up to the damage,
    /// so that the error names the last one read intact.
    func damaged(_ loop: String) async throws -> DurableLoopError {
        var last: UInt64 = 0
        do {
            while true {
                let page = try await events(loop: loop, after: last, limit: 4_096)
                guard let next = page.last?.sequence else { break }
                last = next
            }
        } catch let error as DurableLoopError {
            return error
        } catch {
            return .damagedJournal(loop: loop, sequence: last, reason: "\(damage ?? ""); then \(error)")
        }
        return .damagedJournal(loop: loop, sequence: last, reason: damage ?? "")
    }

    /// Does nothing: a SQLite journal has no lease to give back; the next ``acquire(loop:)``
    /// takes the loop at once.
    public func release(loop: String, epoch: UInt64) async throws {}

    public func latestSnapshot(loop: String) async throws -> JournalRecord? {
        try Self.refuseCutShort(loop)
        return try await Self.naming(loop, "reading its latest snapshot") {
            try await database.read { db in
            try Row.fetchOne(db, sql: """
                SELECT sequence, schema_version, payload FROM feedbackloop_snapshots
                WHERE loop = ? ORDER BY sequence DESC LIMIT 1
                """, arguments: [loop]).map { try Self.record($0, in: "feedbackloop_snapshots", loop: loop) }
            }
        }
    }

    public func events(loop: String, after sequence: UInt64, limit: Int) async throws -> [JournalRecord] {
        try Self.refuseCutShort(loop)
        return try await Self.naming(loop, "reading its events after \(sequence)") { try await database.read { db in
            // Row by row, so that a damaged page is reported after the last event read intact.
            var records: [JournalRecord] = []
            do {
                let rows = try Row.fetchCursor(db, sql: """
                    SELECT sequence, schema_version, payload FROM feedbackloop_events
                    WHERE loop = ? AND sequence > ? ORDER BY sequence LIMIT ?
                    """, arguments: [loop, Int64(clamping: sequence), limit])
                while let row = try rows.next() { records.append(try Self.record(row, in: "feedbackloop_events", loop: loop)) }
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT {
                throw DurableLoopError.damagedJournal(loop: loop, sequence: records.last?.sequence ?? sequence, reason: "\(error)")
            }
            guard records.count < limit else { return records }
            // The last page: the events must reach the head, or a row was renumbered out of
            // reach (a negative sequence) or deleted. Same read transaction, so a concurrent
            // append cannot make them disagree.
            let last = records.last?.sequence ?? sequence
            guard let row = try Row.fetchOne(db, sql: "SELECT head FROM feedbackloop_loops WHERE loop = ?", arguments: [loop]) else {
                return records
            }
            let head = UInt64(try Self.integer(row, "head", in: "feedbackloop_loops", loop: loop, sequence: nil))
            if head > last {
                throw JournalError.malformedValue(
                    loop: loop, sequence: last + 1, column: "feedbackloop_events.sequence",
                    found: "has no row for event \(last + 1), though feedbackloop_loops.head is \(head)")
            }
            return records
        } }
    }

    public func append(loop: String, epoch: UInt64, events: [JournalRecord], snapshot: JournalRecord?) async throws {
        try Self.refuseCutShort(loop)
        if let damage { throw JournalError.unavailable("\(damage); it is open only for reading, nothing was written") }
        guard let first = events.first?.sequence else { return }
        for (offset, record) in events.enumerated() where record.sequence != first + UInt64(offset) {
            throw JournalError.sequenceConflict(loop: loop, expected: first + UInt64(offset), found: record.sequence)
        }
        let last = first + UInt64(events.count) - 1
        // SQLite's integers are signed: a sequence past Int64.max cannot be stored.
        guard Int64(exactly: last) != nil, snapshot.map({ Int64(exactly: $0.sequence) != nil }) ?? true else {
            throw JournalError.unavailable(
                "journal of loop '\(loop)': events \(first)...\(last) are numbered past SQLite's largest integer; nothing was written")
        }
        guard let storedEpoch = Int64(exactly: epoch) else { throw JournalError.fenced(loop: loop, epoch: epoch) }
        // With an archive, the events the prune will delete are handed to it first, outside the
        // transaction, and the prune deletes none past them.
        var archivedThrough: UInt64?
        if let snapshot, let retention, let archive = retention.archive {
            let (snapshots, firstStored) = try await Self.naming(loop, "reading what to archive") {
                try await database.read { db in
                    let snapshots = try Row.fetchAll(db, sql: "SELECT sequence FROM feedbackloop_snapshots WHERE loop = ?", arguments: [loop])
                        .map { UInt64(try Self.integer($0, "sequence", in: "feedbackloop_snapshots", loop: loop, sequence: nil, minimum: 1)) }
                    let first = try Row.fetchOne(
                        db, sql: "SELECT min(sequence) AS sequence FROM feedbackloop_events WHERE loop = ?", arguments: [loop])
                    guard let first, !first.hasNull(atIndex: 0) else { return (snapshots, UInt64?.none) }
                    return (snapshots, UInt64(try Self.integer(first, "sequence", in: "feedbackloop_events", loop: loop, sequence: nil, minimum: 1)))
                }
            }
            archivedThrough = try await retention.archiveBeforePruning(
                archive, loop: loop, snapshot: snapshot.sequence, appended: events, storedSnapshots: snapshots,
                firstStoredEvent: firstStored, readStored: { after, limit in try await self.events(loop: loop, after: after, limit: limit) })
        }
        try await database.write { [archivedThrough] db in
            try db.execute(
                sql: "UPDATE feedbackloop_loops SET head = ? WHERE loop = ? AND epoch = ? AND head = ?",
                arguments: [Int64(last), loop, storedEpoch, Int64(first) - 1])
            if db.changesCount != 1 {
                let row = try Row.fetchOne(db, sql: "SELECT epoch, head FROM feedbackloop_loops WHERE loop = ?", arguments: [loop])
                guard let row else { throw JournalError.fenced(loop: loop, epoch: epoch) }
                let owner = try Self.integer(row, "epoch", in: "feedbackloop_loops", loop: loop, sequence: nil)
                let head = try Self.integer(row, "head", in: "feedbackloop_loops", loop: loop, sequence: nil)
                guard owner == storedEpoch else { throw JournalError.fenced(loop: loop, epoch: epoch) }
                throw JournalError.sequenceConflict(loop: loop, expected: UInt64(head) + 1, found: first)
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
                if let retention {
                    try Self.prune(db, loop: loop, retention, archivedThrough: archivedThrough)
                } else {
                    try db.execute(
                        sql: "DELETE FROM feedbackloop_snapshots WHERE loop = ? AND sequence < ?",
                        arguments: [loop, Int64(snapshot.sequence)])
                }
            }
        }
    }

    /// Deletes what `retention` does not keep of `loop`, in the append's transaction: the
    /// snapshots older than the newest `snapshotsKept`, and the events before the oldest kept
    /// snapshot (at most `maximumEventsPrunedPerAppend`, the oldest first; with an archive, none
    /// after `archivedThrough`, the last event it took).
    static func prune(_ db: Database, loop: String, _ retention: JournalRetention, archivedThrough: UInt64?) throws {
        guard let row = try Row.fetchOne(db, sql: """
            SELECT sequence FROM feedbackloop_snapshots WHERE loop = ? ORDER BY sequence DESC LIMIT 1 OFFSET ?
            """, arguments: [loop, retention.snapshotsKept - 1])
        else { return }
        let oldestKept = try integer(row, "sequence", in: "feedbackloop_snapshots", loop: loop, sequence: nil, minimum: 1)
        try db.execute(sql: "DELETE FROM feedbackloop_snapshots WHERE loop = ? AND sequence < ?", arguments: [loop, oldestKept])
        let first = try Row.fetchOne(db, sql: "SELECT min(sequence) AS sequence FROM feedbackloop_events WHERE loop = ?", arguments: [loop])
        guard let first, !first.hasNull(atIndex: 0) else { return }
        let firstEvent = try integer(first, "sequence", in: "feedbackloop_events", loop: loop, sequence: nil, minimum: 1)
        var end = min(oldestKept, firstEvent.addingReportingOverflow(Int64(retention.maximumEventsPrunedPerAppend)).partialValue)
        if retention.archive != nil { end = min(end, archivedThrough.map { Int64($0) + 1 } ?? 0) }
        try db.execute(sql: "DELETE FROM feedbackloop_events WHERE loop = ? AND sequence < ?", arguments: [loop, end])
    }

    /// Moves every committed transaction from the write-ahead log into the database file and
    /// empties the log (`PRAGMA wal_checkpoint(TRUNCATE)`), so that the file alone holds the
    /// journal: before copying it for the replay check, or measuring what it takes on disk.
    ///
    /// SQLite checkpoints on its own every ~1,000 pages and when the last connection closes;
    /// this does it now. It waits for a write in progress (up to `busyTimeout`); a reader that
    /// still uses older pages of the log leaves them there, and the log is then not emptied.
    ///
    /// - Throws: ``JournalError/unavailable(_:)`` with SQLite's error.
    public func checkpoint() async throws {
        do {
            try await database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        } catch let error as DatabaseError {
            throw JournalError.unavailable("SQLite journal at '\(database.path)': checkpoint failed: \(error)")
        }
    }

    public func loopIDs() async throws -> [String] {
        try await database.read { db in
            try Row.fetchAll(db, sql: "SELECT loop FROM feedbackloop_loops ORDER BY loop").map { row in
                let value: DatabaseValue = row["loop"]
                guard case .string(let loop) = value.storage else {
                    throw JournalError.malformedValue(
                        loop: "?", sequence: nil, column: "feedbackloop_loops.loop", found: Self.describe(value))
                }
                return loop
            }
        }
    }

    /// The snapshots the journal keeps, oldest first: the latest only, or with a ``retention``
    /// policy, up to its `snapshotsKept`.
    public func snapshots(loop: String) async throws -> [JournalRecord] {
        try Self.refuseCutShort(loop)
        return try await Self.naming(loop, "reading its snapshots") {
            try await database.read { db in
                try Row.fetchAll(db, sql: """
                    SELECT sequence, schema_version, payload FROM feedbackloop_snapshots WHERE loop = ? ORDER BY sequence
                    """, arguments: [loop]).map { try Self.record($0, in: "feedbackloop_snapshots", loop: loop) }
            }
        }
    }

    /// The feature recorded in the loop's row (see ``acquire(loop:feature:)``); `nil` when the
    /// row records none, or the file was written before features were recorded and, damaged,
    /// was opened only for reading (so without the column).
    public func feature(loop: String) async throws -> String? {
        try Self.refuseCutShort(loop)
        return try await Self.naming(loop, "reading its feature") {
            try await database.read { db in
                guard try db.columns(in: "feedbackloop_loops").contains(where: { $0.name == "feature" }),
                    let row = try Row.fetchOne(db, sql: "SELECT feature FROM feedbackloop_loops WHERE loop = ?", arguments: [loop])
                else { return nil }
                let stored: DatabaseValue = row["feature"]
                switch stored.storage {
                case .null: return nil
                case .string(let feature): return feature
                default:
                    throw JournalError.malformedValue(loop: loop, sequence: nil, column: "feedbackloop_loops.feature", found: Self.describe(stored))
                }
            }
        }
    }

    /// Refuses a loop id (or a feature name) with a NUL character: GRDB hands SQLite every
    /// string as a C string, which ends at the first NUL, so `"job\0a"` and `"job\0b"` would
    /// both be the loop `"job"` — two loops sharing one history, each recovering the other's
    /// events as its own.
    ///
    /// - Throws: ``JournalError/unavailable(_:)`` naming the id, before anything is read or
    ///   written.
    static func refuseCutShort(_ loop: String, what: String = "loop id") throws {
        guard loop.utf8.contains(0) else { return }
        let shown = loop.replacingOccurrences(of: "\0", with: "\\0")
        let prefix = String(decoding: loop.utf8.prefix { $0 != 0 }, as: UTF8.self)
        throw JournalError.unavailable(
            "\(what) '\(shown)' contains a NUL character: SQLite would store it as '\(prefix)'; nothing was read or written")
    }

    // MARK: Reading rows another tool may have altered

    /// Runs a read of `loop`'s journal, turning SQLite's errors (a truncated file, a garbage
    /// page: "database disk image is malformed") into a ``JournalError/unavailable(_:)`` that
    /// names the loop and what was being read.
    static func naming<Result>(_ loop: String, _ reading: String, _ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT {
            throw DurableLoopError.damagedJournal(loop: loop, sequence: 0, reason: "\(reading) failed: \(error)")
        } catch let error as DatabaseError {
            throw JournalError.unavailable("journal of loop '\(loop)': \(reading) failed: \(error)")
        }
    }

    /// The event or snapshot in `row` of `table`. Every column is checked, since another tool
    /// (or a damaged page) may have left text where an integer belongs, or a negative number:
    /// a bad one is a ``JournalError/malformedValue(loop:sequence:column:found:)``.
    static func record(_ row: Row, in table: String, loop: String) throws -> JournalRecord {
        let sequence = UInt64(try integer(row, "sequence", in: table, loop: loop, sequence: nil, minimum: 1))
        let schemaVersion = try integer(row, "schema_version", in: table, loop: loop, sequence: sequence, minimum: Int64(Int.min))
        let payload: [UInt8]
        let value: DatabaseValue = row["payload"]
        switch value.storage {
        case .blob(let data): payload = [UInt8](data)
        // The sqlite3 shell writes a quoted literal as text: its bytes are the payload.
        case .string(let text): payload = Array(text.utf8)
        default:
            throw JournalError.malformedValue(loop: loop, sequence: sequence, column: "\(table).payload", found: describe(value))
        }
        return JournalRecord(sequence: sequence, schemaVersion: Int(schemaVersion), payload: payload)
    }

    /// The integer `column` of `row`, if it is one and at least `minimum`.
    static func integer(
        _ row: Row, _ column: String, in table: String, loop: String, sequence: UInt64?, minimum: Int64 = 0
    ) throws -> Int64 {
        let value: DatabaseValue = row[column]
        guard case .int64(let integer) = value.storage, integer >= minimum else {
            throw JournalError.malformedValue(loop: loop, sequence: sequence, column: "\(table).\(column)", found: describe(value))
        }
        return integer
    }

    static func describe(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: "holds NULL"
        case .int64(let integer): "holds the integer \(integer)"
        case .double(let real): "holds the real \(real)"
        case .string(let text): "holds the text '\(text.prefix(40))'"
        case .blob(let data): "holds a blob of \(data.count) bytes"
        }
    }
}
#endif
