#if Durable
/// How much of a loop's history a journal keeps: the newest snapshots and the events from the
/// oldest of them on, so that a long-lived loop's journal stops growing.
///
/// ```swift
/// let journal = try SQLiteJournal(path: "orders.sqlite", retention: JournalRetention(keepingSnapshots: 2))
/// ```
///
/// A journal without a retention policy keeps every event (and, in ``SQLiteJournal`` and the
/// PostgreSQL store, only the latest snapshot).
///
/// ## What is kept
/// The ``snapshotsKept`` newest snapshots of each loop, and every event from the oldest of them
/// on — that snapshot's own event included, since recovery checks that the journal holds it.
/// While a loop has fewer snapshots than that, nothing of it is deleted. Recovery needs only the
/// newest snapshot and the events after it, so it never misses what was pruned.
///
/// ## When pruning runs, and what it costs
/// Inside the append that writes a snapshot (every `DurableConfiguration.snapshotEvery` events),
/// in the same transaction: it is fenced like the append (a deposed owner's append prunes
/// nothing) and all-or-nothing with it (a crash in the middle leaves the journal as it was
/// before the append, recoverable). In a steady state it deletes one snapshot interval of
/// events per snapshot, about the cost of writing them. At most
/// ``maximumEventsPrunedPerAppend`` events go in one append, so that turning retention on for a
/// long journal does not make one transaction delete its whole history: the backlog goes over
/// the following snapshots.
///
/// Deleted rows free pages that later appends reuse; the file or table does not shrink on its
/// own (SQLite's `VACUUM`, PostgreSQL's `VACUUM FULL` give the space back to the system).
///
/// ## The replay check
/// Pruned events can no longer be replayed: the replay check (`JournalReplayCheck`) of a pruned
/// loop starts from the oldest snapshot the journal keeps and compares the newer ones, so it can
/// only find a divergence after that snapshot. Keep enough snapshots (or run the check on a copy
/// taken before pruning) for the history the check should cover.
public struct JournalRetention: Sendable, Hashable {
    /// How many of each loop's newest snapshots are kept; at least 1.
    public let snapshotsKept: Int
    /// The most events one append deletes; at least 1. Default: 10,000.
    public let maximumEventsPrunedPerAppend: Int

    /// A policy that keeps each loop's `snapshots` newest snapshots and the events from the
    /// oldest of them on.
    ///
    /// - Parameters:
    ///   - snapshots: How many snapshots to keep per loop; at least 1.
    ///   - maximumEventsPrunedPerAppend: The most events one append deletes; at least 1.
    public init(keepingSnapshots snapshots: Int, maximumEventsPrunedPerAppend: Int = 10_000) {
        precondition(snapshots >= 1, "JournalRetention must keep at least 1 snapshot")
        precondition(maximumEventsPrunedPerAppend >= 1, "maximumEventsPrunedPerAppend must be positive")
        self.snapshotsKept = snapshots
        self.maximumEventsPrunedPerAppend = maximumEventsPrunedPerAppend
    }
}
#endif
