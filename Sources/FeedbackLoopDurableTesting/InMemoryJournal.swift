#if Durable && Testing
import FeedbackLoop
import FeedbackLoopDurable

/// An `EventJournal` in memory, for tests: the same rules as a store on disk — ownership with a
/// fencing epoch, dense sequences, all-or-nothing appends — without a file, and it keeps every
/// snapshot so that ``JournalReplayCheck`` can check each one.
///
/// Keep one journal value to "restart" a loop: a new `DurableLoop` on the same journal recovers
/// what the previous one journaled, as a process opening the same file would.
public final class InMemoryJournal: BrowsableJournal {
    struct Stored {
        var epoch: UInt64 = 0
        var events: [JournalRecord] = []
        var snapshots: [JournalRecord] = []
    }

    let loops = Lock<[String: Stored]>([:])

    /// An empty journal.
    public init() {}

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
            guard let events = loops[loop]?.events, sequence < UInt64(events.count) else { return [] }
            return Array(events[Int(sequence)...].prefix(limit))
        }
    }

    public func append(loop: String, epoch: UInt64, events: [JournalRecord], snapshot: JournalRecord?) async throws {
        guard let first = events.first?.sequence else { return }
        try loops.withLock { loops in
            let stored = loops[loop] ?? Stored()
            guard stored.epoch == epoch else { throw JournalError.fenced(loop: loop, epoch: epoch) }
            for (offset, record) in events.enumerated() where record.sequence != UInt64(stored.events.count) + UInt64(offset) + 1 {
                throw JournalError.sequenceConflict(
                    loop: loop, expected: UInt64(stored.events.count) + UInt64(offset) + 1, found: offset == 0 ? first : record.sequence)
            }
            loops[loop]!.events += events
            if let snapshot { loops[loop]!.snapshots.append(snapshot) }
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
