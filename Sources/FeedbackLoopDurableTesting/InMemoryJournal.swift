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
        /// The events from `pruned + 1` to the head.
        var events: [JournalRecord] = []
        /// How many events retention deleted from the front.
        var pruned: UInt64 = 0
        var snapshots: [JournalRecord] = []

        var head: UInt64 { pruned + UInt64(events.count) }

        mutating func prune(_ retention: JournalRetention) {
            guard snapshots.count >= retention.snapshotsKept else { return }
            snapshots.removeFirst(snapshots.count - retention.snapshotsKept)
            let oldestKept = snapshots[0].sequence
            let count = min(Int(clamping: oldestKept - 1 - min(pruned, oldestKept - 1)), retention.maximumEventsPrunedPerAppend)
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
        try loops.withLock { loops in
            let stored = loops[loop] ?? Stored()
            guard stored.epoch == epoch else { throw JournalError.fenced(loop: loop, epoch: epoch) }
            for (offset, record) in events.enumerated() where record.sequence != stored.head + UInt64(offset) + 1 {
                throw JournalError.sequenceConflict(
                    loop: loop, expected: stored.head + UInt64(offset) + 1, found: offset == 0 ? first : record.sequence)
            }
            loops[loop]!.events += events
            if let snapshot {
                loops[loop]!.snapshots.append(snapshot)
                if let retention { loops[loop]!.prune(retention) }
            }
        }
    }

    public func loopIDs() async throws -> [String] {
        loops.withLock { $0.keys.sorted() }
    }

    public func snapshots(loop: String) async throws -> [JournalRecord] {
        loops.withLock { $0[loop]?.snapshots ?? [] }
    }
}
#endif
