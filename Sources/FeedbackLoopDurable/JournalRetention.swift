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
/// ## Archiving instead of deleting
/// With an ``archive``, the events a prune is about to delete are first handed to it, so that
/// they leave the journal only once they are kept elsewhere (cold storage, another table):
///
/// ```swift
/// let archive = JournalArchive { loop, events in
///     try await coldStorage.store(events, of: loop)   // throws when the copy is not safe
/// }
/// let journal = try SQLiteJournal(path: "orders.sqlite", retention: JournalRetention(keepingSnapshots: 2, archive: archive))
/// ```
///
/// See ``JournalArchive`` for when it is called and what happens when it throws.
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
    /// Where the events go before they are deleted; `nil`: they are only deleted.
    public let archive: JournalArchive?

    /// A policy that keeps each loop's `snapshots` newest snapshots and the events from the
    /// oldest of them on.
    ///
    /// - Parameters:
    ///   - snapshots: How many snapshots to keep per loop; at least 1.
    ///   - maximumEventsPrunedPerAppend: The most events one append deletes; at least 1.
    ///   - archive: Where the events go before they are deleted. Default: `nil`, they are only
    ///     deleted.
    public init(keepingSnapshots snapshots: Int, maximumEventsPrunedPerAppend: Int = 10_000, archive: JournalArchive? = nil) {
        precondition(snapshots >= 1, "JournalRetention must keep at least 1 snapshot")
        precondition(maximumEventsPrunedPerAppend >= 1, "maximumEventsPrunedPerAppend must be positive")
        self.snapshotsKept = snapshots
        self.maximumEventsPrunedPerAppend = maximumEventsPrunedPerAppend
        self.archive = archive
    }

    /// Where the prune of an append ends: the first event it keeps of a loop whose first stored
    /// event is `firstEvent` and whose snapshots, once the append wrote its own, are `snapshots`
    /// (in any order). Every event from `firstEvent` up to the answer, excluded, goes; `nil`:
    /// none does.
    private func pruneEnd(firstEvent: UInt64, snapshots: [UInt64]) -> UInt64? {
        let newest = Set(snapshots).sorted(by: >)
        guard newest.count >= snapshotsKept else { return nil }
        let oldestKept = newest[snapshotsKept - 1]
        let end = min(oldestKept, firstEvent.addingReportingOverflow(UInt64(maximumEventsPrunedPerAppend)).partialValue)
        return end > firstEvent ? end : nil
    }

    /// Hands ``archive`` the events that the append writing `snapshot` will prune, before that
    /// append; returns the last one handed, the newest event the append's prune may delete
    /// (`nil`: it deletes none).
    ///
    /// - Parameters:
    ///   - appended: The append's events, which its prune may delete too.
    ///   - storedSnapshots: The sequences of the loop's snapshots before the append.
    ///   - firstStoredEvent: The loop's first stored event, if it has any.
    ///   - readStored: Reads up to `limit` stored events after `after`, as `EventJournal.events`.
    /// - Throws: ``JournalError/archiveFailed(loop:events:reason:)`` when the archive throws.
    package func archiveBeforePruning(
        _ archive: JournalArchive, loop: String, snapshot: UInt64, appended: [JournalRecord], storedSnapshots: [UInt64],
        firstStoredEvent: UInt64?, readStored: (_ after: UInt64, _ limit: Int) async throws -> [JournalRecord]
    ) async throws -> UInt64? {
        guard let firstAppended = appended.first?.sequence else { return nil }
        let firstEvent = min(firstStoredEvent ?? firstAppended, firstAppended)
        guard let end = pruneEnd(firstEvent: firstEvent, snapshots: storedSnapshots + [snapshot]) else { return nil }
        var records: [JournalRecord] = []
        if firstEvent < firstAppended {
            let stored = min(end, firstAppended) - firstEvent
            records = try await readStored(firstEvent - 1, Int(stored))
            guard records.count == Int(stored), records.first?.sequence == firstEvent else {
                throw JournalError.unavailable(
                    "journal of loop '\(loop)': events \(firstEvent)..<\(firstEvent + stored) to archive read back as "
                        + "\(records.map(\.sequence)); nothing was written")
            }
        }
        records += appended.prefix { $0.sequence < end }
        do {
            try await archive.store(records, of: loop)
        } catch let error as CancellationError {
            throw error
        } catch {
            throw JournalError.archiveFailed(loop: loop, events: firstEvent...(end - 1), reason: "\(error)")
        }
        return end - 1
    }
}

/// Where a ``JournalRetention`` hands a loop's events before it deletes them.
///
/// ## When it is called
/// Before an append that writes a snapshot and whose prune will delete events, with those
/// events: the oldest of the loop first, dense, at most
/// ``JournalRetention/maximumEventsPrunedPerAppend``, each with its sequence, schema version and
/// payload as the journal holds them. The append (and its prune) starts once the archive
/// returns, so its time adds to that append's; it runs on the loop's committer, never under a
/// lock, and for one loop never twice at once.
///
/// The journal deletes only events the archive returned for: an event is either still in the
/// journal or was handed to the archive first. The archive may be handed an event again: when
/// the append after it fails or is fenced (a deposed owner archives, then cannot prune), the next
/// owner hands the same events. Store them keyed by loop and sequence.
///
/// Snapshots that retention deletes are not archived: when every prune of a loop archived, the
/// archive holds its events from the first on, which rebuild every state.
///
/// ## When it throws
/// The append that needed it fails with ``JournalError/archiveFailed(loop:events:reason:)``
/// naming the loop and the events it was handed: nothing of that append is written and nothing
/// is deleted. The ``DurableLoop`` stops with that error, as after a full disk, and a restarted
/// loop recovers everything journaled before it; its next snapshot append hands the archive the
/// same events again. (With a leased store, the stopped loop keeps its lease: the same node
/// takes the loop back at once, another once the lease has expired.) An archive that must not
/// stop loops when its destination is down should take the events somewhere local and return.
public final class JournalArchive: Sendable, Hashable {
    private let body: @Sendable (_ loop: String, _ events: [JournalRecord]) async throws -> Void

    /// An archive that hands each batch to `store`.
    ///
    /// - Parameter store: Keeps `events` of the loop `loop` (see ``JournalArchive`` for when it is
    ///   called); throws when they are not kept, and nothing is then deleted.
    public init(_ store: @escaping @Sendable (_ loop: String, _ events: [JournalRecord]) async throws -> Void) {
        self.body = store
    }

    func store(_ events: [JournalRecord], of loop: String) async throws {
        try await body(loop, events)
    }

    /// The same archive object.
    public static func == (lhs: JournalArchive, rhs: JournalArchive) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
#endif
