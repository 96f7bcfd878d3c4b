#if Durable
/// Where a ``DurableLoop`` keeps its events: an append-only journal per loop, with snapshots and
/// single-writer ownership.
///
/// A journal stores opaque, already-encoded records; the loop encodes and decodes them. Every
/// store passes the same durability suite (`Tests/FeedbackLoopDurableTests`): the SQLite store
/// (``SQLiteJournal``) in this product, the PostgreSQL store in `FeedbackLoopPostgres`.
///
/// ## What a store must guarantee
/// - **Ownership with a fencing epoch.** ``acquire(loop:)`` makes the caller the loop's only
///   writer and returns an epoch greater than every epoch handed out before for that loop. An
///   ``append(loop:epoch:events:snapshot:)`` with an older epoch fails with
///   ``JournalError/fenced(loop:epoch:)`` and writes nothing: a deposed owner cannot write.
/// - **Dense sequences.** Appended events carry the numbers right after the journal's head, with
///   no gap; anything else fails with ``JournalError/sequenceConflict(loop:expected:found:)``
///   and writes nothing.
/// - **One feature per loop.** ``acquire(loop:feature:)`` records the name of the feature that
///   opens a loop the first time, and refuses a loop that another feature journaled with
///   ``DurableLoopError/featureMismatch(loop:journaled:opening:)``, writing nothing.
/// - **Atomic group commit.** One `append` — its events and its snapshot — is one transaction:
///   when it returns, all of it is durable; when it throws, none of it is visible.
public protocol EventJournal: Sendable {
    /// Takes ownership of `loop`'s journal (creating it when new) and returns the new epoch,
    /// greater than any epoch handed out before for `loop`.
    ///
    /// - Throws: ``JournalError/ownedElsewhere(loop:)`` when a store with leases finds another
    ///   owner's lease still live; an I/O error of the store.
    func acquire(loop: String) async throws -> UInt64

    /// Takes ownership of `loop`'s journal as ``acquire(loop:)`` does, for the feature named
    /// `feature` (``DurableConfiguration/feature``): this is what ``DurableLoop`` calls.
    ///
    /// The first call for a loop records `feature` with it; so does the first call for a loop
    /// journaled before its store recorded features (it has none yet). Every later call checks
    /// it, in the same transaction as the ownership it takes.
    ///
    /// The default implementation calls ``acquire(loop:)`` and checks nothing: a store of your
    /// own that implements only that method never catches two features under one id.
    ///
    /// - Throws: ``DurableLoopError/featureMismatch(loop:journaled:opening:)`` when the loop's
    ///   journal records another feature, having written nothing (no epoch is taken); the errors
    ///   of ``acquire(loop:)``.
    func acquire(loop: String, feature: String) async throws -> UInt64

    /// Gives up ownership taken with `epoch`, so that another owner may take the loop at once.
    /// Releasing an epoch that is no longer the owner's does nothing.
    func release(loop: String, epoch: UInt64) async throws

    /// The newest snapshot of `loop`, or `nil` when it has none.
    func latestSnapshot(loop: String) async throws -> JournalRecord?

    /// Up to `limit` events of `loop` with sequence numbers greater than `sequence`, in order.
    func events(loop: String, after sequence: UInt64, limit: Int) async throws -> [JournalRecord]

    /// Appends `events` (dense, starting right after the journal's head) and, when given,
    /// `snapshot`, in one transaction fenced by `epoch`.
    ///
    /// - Throws: ``JournalError/fenced(loop:epoch:)`` when `epoch` no longer owns the loop;
    ///   ``JournalError/sequenceConflict(loop:expected:found:)`` when `events` does not continue
    ///   the journal; an I/O error of the store. Nothing is written when it throws.
    func append(loop: String, epoch: UInt64, events: [JournalRecord], snapshot: JournalRecord?) async throws
}

extension EventJournal {
    /// Takes ownership with ``acquire(loop:)``, without recording or checking `feature`.
    public func acquire(loop: String, feature: String) async throws -> UInt64 {
        try await acquire(loop: loop)
    }
}

/// One encoded record of a journal: an event, or a snapshot of the state after the event with
/// the same sequence number.
public struct JournalRecord: Sendable, Hashable {
    /// The event's place in its loop's journal: 1 for the first event, dense after it. A
    /// snapshot's sequence is the last event it includes.
    public var sequence: UInt64
    /// The schema version the payload was written with (see
    /// ``DurableConfiguration/schemaVersion``).
    public var schemaVersion: Int
    /// The encoded event or state.
    public var payload: [UInt8]

    /// A record of `payload`, written at `schemaVersion`, numbered `sequence`.
    public init(sequence: UInt64, schemaVersion: Int, payload: [UInt8]) {
        self.sequence = sequence
        self.schemaVersion = schemaVersion
        self.payload = payload
    }
}

/// Why a journal refused an operation.
public enum JournalError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The append's epoch no longer owns the loop: another owner acquired it since (or, with a
    /// leased store, the lease expired). Nothing was written.
    case fenced(loop: String, epoch: UInt64)
    /// The appended events do not continue the journal: its head is `expected - 1`, the first
    /// appended event was numbered `found`. Nothing was written.
    case sequenceConflict(loop: String, expected: UInt64, found: UInt64)
    /// Another owner holds a live lease on the loop.
    case ownedElsewhere(loop: String)
    /// The journal is not usable: a bad configuration or an unexpected answer from the store.
    case unavailable(String)
    /// A value read from the store is not one a journal writes — text where an integer belongs,
    /// a negative sequence, head or epoch, an integer where a payload's bytes belong, an event
    /// missing below the head — as when another tool altered the rows. `sequence` is the
    /// record's number when it is known; `column` names the table and the column; `found` says
    /// what is there ("holds the text 'x'"). Nothing was written, and nothing past that record
    /// was read.
    case malformedValue(loop: String, sequence: UInt64?, column: String, found: String)
    /// The retention's `JournalArchive` threw when handed these events of the loop, which the
    /// append's prune was to delete; `reason` is its error. Nothing was written, nothing deleted.
    case archiveFailed(loop: String, events: ClosedRange<UInt64>, reason: String)

    public var description: String {
        switch self {
        case .fenced(let loop, let epoch):
            "journal of loop '\(loop)': epoch \(epoch) no longer owns it; nothing was written"
        case .sequenceConflict(let loop, let expected, let found):
            "journal of loop '\(loop)': expected event \(expected) next, got \(found); nothing was written"
        case .ownedElsewhere(let loop):
            "journal of loop '\(loop)': another owner holds a live lease"
        case .unavailable(let reason):
            "journal unavailable: \(reason)"
        case .malformedValue(let loop, let sequence, let column, let found):
            "journal of loop '\(loop)'\(sequence.map { ", record \($0)" } ?? ""): \(column) \(found), "
                + "which a journal never writes (was the row altered by another tool?); nothing was written"
        case .archiveFailed(let loop, let events, let reason):
            "journal of loop '\(loop)': the archive did not take events \(events.lowerBound)...\(events.upperBound) "
                + "before their prune: \(reason); nothing was written nor deleted"
        }
    }
}

/// A journal that can say what it holds, for tools that read every loop rather than run one:
/// the replay check (`JournalReplayCheck` in `FeedbackLoopDurableTesting`).
///
/// Both methods only read; they take no ownership and may run while owners append (each answer
/// is consistent in itself, not with the other).
public protocol BrowsableJournal: EventJournal {
    /// The id of every loop the journal holds, in ascending order.
    func loopIDs() async throws -> [String]

    /// Every snapshot of `loop` the store keeps, oldest first (a store that keeps only the
    /// latest returns at most one).
    func snapshots(loop: String) async throws -> [JournalRecord]

    /// The name of the feature that journals `loop`, as ``EventJournal/acquire(loop:feature:)``
    /// recorded it (see ``DurableConfiguration/feature``); `nil` for a loop no feature has
    /// opened since the store began recording names, or one the journal does not hold.
    ///
    /// The default implementation returns `nil`: a store of your own that records no feature
    /// lets the replay check decode every loop with the types it is given.
    func feature(loop: String) async throws -> String?
}

extension BrowsableJournal {
    /// Returns `nil`: this store records no feature.
    public func feature(loop: String) async throws -> String? { nil }
}
#endif
