#if Durable
/// Why a ``DurableLoop`` refused an event or could not recover.
public enum DurableLoopError: Error, Sendable, CustomStringConvertible {
    /// The loop has stopped (or is stopping): the event was not journaled.
    case stopped(loop: String)
    /// A journaled event could not be decoded at recovery. Recovery stops there: an event is
    /// never skipped.
    case undecodableEvent(loop: String, sequence: UInt64, reason: String)
    /// The snapshot could not be decoded at recovery.
    case undecodableSnapshot(loop: String, sequence: UInt64, reason: String)
    /// A record was written with a schema version newer than this program's
    /// (``DurableConfiguration/schemaVersion``): an older binary must not guess at it.
    case unsupportedSchemaVersion(loop: String, sequence: UInt64, found: Int, supported: Int)
    /// The journal skips a sequence number at recovery: the store lost a record.
    case journalGap(loop: String, expected: UInt64, found: UInt64)
    /// The event could not be encoded, so it was not journaled.
    case unencodableEvent(loop: String, reason: String)
    /// The latest snapshot is of event `sequence`, which the journal does not hold: the events
    /// were truncated, or the snapshot belongs to another loop. Recovery stops rather than
    /// carry on from a state no event explains.
    case snapshotAheadOfEvents(loop: String, sequence: UInt64)
    /// The loop's journal was written by another feature: it records `journaled` as the name of
    /// the feature that journaled it, and the loop opening it is `opening` (see
    /// ``DurableConfiguration/feature``). Two features under one id; nothing was written.
    case featureMismatch(loop: String, journaled: String, opening: String)
    /// The store's file is damaged (truncated, or a page overwritten): the loop's events read
    /// intact up to event `sequence` (0: none), and reading on failed with `reason`. Nothing was
    /// written: a file that SQLite finds damaged when the journal opens it is only read, and
    /// `SQLiteJournal` reads what recovery will read of the loop when it acquires it, before it
    /// takes the epoch, so that damage found there takes none. (A store that finds damage only
    /// during recovery has taken the epoch by then, and appends nothing.) Restore the file from a
    /// copy.
    case damagedJournal(loop: String, sequence: UInt64, reason: String)

    public var description: String {
        switch self {
        case .stopped(let loop):
            "durable loop '\(loop)' has stopped; the event was not journaled"
        case .undecodableEvent(let loop, let sequence, let reason):
            "durable loop '\(loop)': event \(sequence) of the journal cannot be decoded: \(reason)"
        case .undecodableSnapshot(let loop, let sequence, let reason):
            "durable loop '\(loop)': the snapshot at event \(sequence) cannot be decoded: \(reason)"
        case .unsupportedSchemaVersion(let loop, let sequence, let found, let supported):
            "durable loop '\(loop)': record \(sequence) has schema version \(found), newer than this program's \(supported)"
        case .journalGap(let loop, let expected, let found):
            "durable loop '\(loop)': the journal skips from event \(expected - 1) to \(found)"
        case .unencodableEvent(let loop, let reason):
            "durable loop '\(loop)': the event cannot be encoded and was not journaled: \(reason)"
        case .snapshotAheadOfEvents(let loop, let sequence):
            "durable loop '\(loop)': the snapshot at event \(sequence) is newer than the journal's events (there is no event \(sequence)); nothing was written"
        case .featureMismatch(let loop, let journaled, let opening):
            "durable loop '\(loop)': its journal was written by the feature '\(journaled)', not by '\(opening)', which is opening it "
                + "(two features under one loop id, or a renamed feature: see DurableConfiguration.feature); nothing was written"
        case .damagedJournal(let loop, let sequence, let reason):
            "durable loop '\(loop)': the journal is damaged after event \(sequence), the last one read intact: \(reason); nothing was appended"
        }
    }
}
#endif
