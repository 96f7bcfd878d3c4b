#if Postgres
import FeedbackLoopDurable
import PostgresNIO

/// What the replay check (`JournalReplayCheck` in `FeedbackLoopDurableTesting`) reads of a
/// PostgreSQL journal: every loop with a lease row, its feature and its snapshots.
extension PostgresJournal: BrowsableJournal {
    /// Every loop that was ever acquired (each has a lease row, live or not), in ascending order
    /// of the database's collation.
    public func loopIDs() async throws -> [String] {
        try await operation("listing loops", loop: nil) { [self] in
            try await migrate()
            return try await withConnection { db in
                var ids: [String] = []
                for row in try await db.rows("SELECT loop FROM feedbackloop_leases ORDER BY loop") {
                    ids.append(try row.decode(String.self))
                }
                return ids
            }
        }
    }

    /// The feature recorded in the loop's lease row (see ``acquire(loop:feature:)``); `nil` when
    /// the row records none, or there is no row.
    public func feature(loop: String) async throws -> String? {
        try await operation("reading the feature", loop: loop) { [self] in
            try await migrate()
            return try await withConnection { db in
                for row in try await db.rows("SELECT feature FROM feedbackloop_leases WHERE loop = \(loop)") {
                    return try StoredRow(row, loop: loop, table: "feedbackloop_leases").optionalText(0)
                }
                return nil
            }
        }
    }

    /// The snapshots the journal keeps, oldest first: the latest only, or with a ``retention``
    /// policy, up to its `snapshotsKept`.
    public func snapshots(loop: String) async throws -> [JournalRecord] {
        try await operation("reading snapshots", loop: loop) { [self] in
            try await migrate()
            return try await withConnection { db in
                var records: [JournalRecord] = []
                for row in try await db.rows(
                    "SELECT sequence, schema_version, payload FROM feedbackloop_snapshots WHERE loop = \(loop) ORDER BY sequence")
                {
                    records.append(try Self.record(StoredRow(row, loop: loop, table: "feedbackloop_snapshots")))
                }
                return records
            }
        }
    }
}
#endif
