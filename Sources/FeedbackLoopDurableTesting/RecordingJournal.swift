#if Durable && Testing
import FeedbackLoop
import FeedbackLoopDurable

/// An `EventJournal` around another that records every append and can hold
/// appends back, so that a check sees what a loop does while its events are not yet durable.
public final class RecordingJournal: EventJournal {
    /// One call to ``append(loop:epoch:events:snapshot:)``.
    public struct Append: Sendable, Hashable, CustomStringConvertible {
        /// The appended events' sequence numbers.
        public var sequences: [UInt64]
        /// The snapshot's sequence number, if the append carried one.
        public var snapshot: UInt64?
        /// Whether the wrapped journal accepted it.
        public var succeeded: Bool

        public var description: String {
            "\(sequences.first ?? 0)...\(sequences.last ?? 0)\(snapshot.map { " +snapshot \($0)" } ?? "")\(succeeded ? "" : " refused")"
        }
    }

    struct Guarded {
        var holding = false
        var held: [CheckedContinuation<Void, Never>] = []
    }

    /// The wrapped journal.
    public let base: any EventJournal
    /// Every append, in order, recorded when it returned.
    public let appends = Probe<Append>()
    /// The first sequence number of every append, recorded when it began (before it is durable).
    public let begun = Probe<UInt64>()
    let guarded = Lock(Guarded())

    /// Records the appends made to `base`.
    public init(_ base: any EventJournal) {
        self.base = base
    }

    /// From now on, appends wait (before reaching the wrapped journal) until ``release()``.
    public func hold() {
        guarded.withLock { $0.holding = true }
    }

    /// Lets the held appends, and every later one, go through.
    public func release() {
        let held = guarded.withLock { guarded in
            guarded.holding = false
            defer { guarded.held = [] }
            return guarded.held
        }
        for continuation in held { continuation.resume() }
    }

    public func acquire(loop: String) async throws -> UInt64 {
        try await base.acquire(loop: loop)
    }

    public func acquire(loop: String, feature: String) async throws -> UInt64 {
        try await base.acquire(loop: loop, feature: feature)
    }

    public func release(loop: String, epoch: UInt64) async throws {
        try await base.release(loop: loop, epoch: epoch)
    }

    public func latestSnapshot(loop: String) async throws -> JournalRecord? {
        try await base.latestSnapshot(loop: loop)
    }

    public func events(loop: String, after sequence: UInt64, limit: Int) async throws -> [JournalRecord] {
        try await base.events(loop: loop, after: sequence, limit: limit)
    }

    public func append(loop: String, epoch: UInt64, events: [JournalRecord], snapshot: JournalRecord?) async throws {
        begun.record(events.first?.sequence ?? 0)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let held = guarded.withLock { guarded in
                if guarded.holding { guarded.held.append(continuation) }
                return guarded.holding
            }
            if !held { continuation.resume() }
        }
        var record = Append(sequences: events.map(\.sequence), snapshot: snapshot?.sequence, succeeded: false)
        do {
            try await base.append(loop: loop, epoch: epoch, events: events, snapshot: snapshot)
            record.succeeded = true
            appends.record(record)
        } catch {
            appends.record(record)
            throw error
        }
    }
}
#endif
