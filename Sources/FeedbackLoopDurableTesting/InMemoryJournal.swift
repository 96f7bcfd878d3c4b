#if Durable && Testing
import FeedbackLoop
import FeedbackLoopDurable

/// An `EventJournal` in memory, for tests: the same rules as a store on disk — ownership with a
/// fencing epoch, dense sequences, all-or-nothing appends — without a file, and it keeps every
/// snapshot so that ``JournalReplayCheck`` can check each one (with a ``retention`` policy, the
/// snapshots and events it keeps, as a store on disk).
///
/// Keep one journal value to "restart" a loop: a new `DurableLoop` on the same journal recovers
/// what the previous one journaled, as a process opening the same file would.
public final class InMemoryJournal: BrowsableJournal {
    struct Stored {
        var epoch: UInt64 = 0
        /// The feature that journals the loop; `nil` until one opens it with
        /// ``InMemoryJournal/acquire(loop:feature:)``.
        var feature: String?
        /// The events from `pruned + 1` to the head.
        var events: [JournalRecord] = []
        /// How many events retention deleted from the front.
        var pruned: UInt64 = 0
        var snapshots: [JournalRecord] = []

        var head: UInt64 { pruned + UInt64(events.count) }

        /// With an archive, deletes no event after `archivedThrough`, the last one it took.
        mutating func prune(_ retention: JournalRetention, archivedThrough: UInt64?) {
            guard snapshots.count >= retention.snapshotsKept else { return }
            snapshots.removeFirst(snapshots.count - retention.snapshotsKept)
            var end = snapshots[0].sequence
            if retention.archive != nil { end = min(end, archivedThrough.map { $0 + 1 } ?? 0) }
            // Events pruned + 1 up to end, excluded, go.
            let count = min(Int(clamping: end > pruned + 1 ? end - 1 - pruned : 0), retention.maximumEventsPrunedPerAppend)
            events.removeFirst(count)
            pruned += UInt64(count)
        }
    }

    let loops: Lock<[String: Stored]>
    /// What the journal deletes when it writes a snapshot; `nil` deletes nothing.
    public let retention: JournalRetention?

    /// An empty journal.
    ///
    /// - Parameter retention: What to delete when a snapshot is written, as `SQLiteJournal`
    ///   does with the same policy. Default: `nil`, every event and snapshot is kept.
    public convenience init(retention: JournalRetention? = nil) {
        self.init(loops: Lock([:]), retention: retention)
    }

    init(loops: Lock<[String: Stored]>, retention: JournalRetention?) {
        self.loops = loops
        self.retention = retention
    }

    /// Another handle on this journal's loops that applies `retention`, as a process restarted
    /// with another policy would open the same store.
    public func applying(_ retention: JournalRetention?) -> InMemoryJournal {
        InMemoryJournal(loops: loops, retention: retention)
    }

    public func acquire(loop: String) async throws -> UInt64 {
        loops.withLock { loops in
            loops[loop, default: Stored()].epoch += 1
            return loops[loop]!.epoch
        }
    }

    /// Takes the loop for `feature`, as a store on disk does: the first call (or the first
    /// since the loop was journaled through ``acquire(loop:)`` alone, as by a store that records
    /// no feature) records `feature`, every later one checks it.
    ///
    /// - Throws: `DurableLoopError.featureMismatch(loop:journaled:opening:)` when another feature
    ///   journaled the loop; its epoch is left as it was.
    public func acquire(loop: String, feature: String) async throws -> UInt64 {
        try loops.withLock { loops in
            var stored = loops[loop] ?? Stored()
            if let journaled = stored.feature, journaled != feature {
                throw DurableLoopError.featureMismatch(loop: loop, journaled: journaled, opening: feature)
            }
            stored.feature = feature
            stored.epoch += 1
            loops[loop] = stored
            return stored.epoch
        }
    }

    /// Does nothing, as for `SQLiteJournal`: the next ``acquire(loop:)`` takes the loop at once.
    public func release(loop: String, epoch: UInt64) async throws {}

    public func latestSnapshot(loop: String) async throws -> JournalRecord? {
        loops.withLock { $0[loop]?.snapshots.last }
    }

    public func events(loop: String, after sequence: UInt64, limit: Int) async throws -> [JournalRecord] {
        loops.withLock { loops in
            guard let stored = loops[loop], sequence < stored.head else { return [] }
            return Array(stored.events[Int(sequence - min(sequence, stored.pruned))...].prefix(limit))
        }
    }

    public func append(loop: String, epoch: UInt64, events: [JournalRecord], snapshot: JournalRecord?) async throws {
        guard let first = events.first?.sequence else { return }
        // With an archive, the events the prune will delete are handed to it first, with the
        // lock released, and the prune deletes none past them.
        var archivedThrough: UInt64?
        if let snapshot, let retention, let archive = retention.archive {
            let stored = loops.withLock { loops in
                loops[loop].map { (snapshots: $0.snapshots.map(\.sequence), first: $0.events.first?.sequence) }
            }
            archivedThrough = try await retention.archiveBeforePruning(
                archive, loop: loop, snapshot: snapshot.sequence, appended: events, storedSnapshots: stored?.snapshots ?? [],
                firstStoredEvent: stored?.first, readStored: { after, limit in try await self.events(loop: loop, after: after, limit: limit) })
        }
        try loops.withLock { [archivedThrough] loops in
            let stored = loops[loop] ?? Stored()
            guard stored.epoch == epoch else { throw JournalError.fenced(loop: loop, epoch: epoch) }
            for (offset, record) in events.enumerated() where record.sequence != stored.head + UInt64(offset) + 1 {
                throw JournalError.sequenceConflict(
                    loop: loop, expected: stored.head + UInt64(offset) + 1, found: offset == 0 ? first : record.sequence)
            }
            loops[loop]!.events += events
            if let snapshot {
                loops[loop]!.snapshots.append(snapshot)
                if let retention { loops[loop]!.prune(retention, archivedThrough: archivedThrough) }
            }
        }
    }

    public func loopIDs() async throws -> [String] {
        loops.withLock { $0.keys.sorted() }
    }

    public func snapshots(loop: String) async throws -> [JournalRecord] {
        loops.withLock { $0[loop]?.snapshots ?? [] }
    }

    /// The feature that ``acquire(loop:feature:)`` recorded for `loop`, if any.
    public func feature(loop: String) async throws -> String? {
        loops.withLock { $0[loop]?.feature }
    }
}
#endif
