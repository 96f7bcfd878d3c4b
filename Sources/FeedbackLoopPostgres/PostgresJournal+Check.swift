#if Postgres
import FeedbackLoopDurable
import PostgresNIO

/// What the replay check (`JournalReplayCheck` in `FeedbackLoopDurableTesting`) reads of a
/// PostgreSQL journal: every loop with a lease row, and its snapshot.
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

    /// The latest snapshot only: an append with a snapshot deletes the older ones.
    public func snapshots(loop: String) async throws -> [JournalRecord] {
        try await latestSnapshot(loop: loop).map { [$0] } ?? []
    }
}
#endif
