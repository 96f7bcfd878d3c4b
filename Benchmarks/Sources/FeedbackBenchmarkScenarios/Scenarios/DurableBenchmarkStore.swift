import FeedbackLoop
import FeedbackLoopDurable
import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#endif

/// A store the `durable` scenario measures: the journals its durable loops run on, and the
/// store's own writes with no loop, the limit of the same work.
///
/// The SQLite store is built in; the PostgreSQL store conforms in the executable
/// `feedback-bench-postgres`, so that this target never links postgres-nio.
public protocol DurableBenchmarkStore: Sendable {
    associatedtype Journal: EventJournal

    /// The store's name in the report's heading, e.g. "SQLite" or "PostgreSQL 15.14".
    var name: String { get }

    /// What the limit column measures, for the report's `limit:` line.
    var limit: String { get }

    /// A journal for one measurement. The scenario opens a loop id in it that no earlier
    /// measurement used, so a store may hand out the same journal every time or a new one.
    func journal() async throws -> Journal

    /// The limit: nanoseconds per event for `events` pre-encoded events written straight to the
    /// store with no loop, `perTransaction` events in each transaction, each transaction
    /// committed (durable) before the next begins.
    func bareAppends(events: Int, perTransaction: Int) async throws -> Double

    /// Opens the scenario's counter (``DurableScenario/open(_:_:id:)``) under `id` in `journal`.
    /// A store in another module implements it with its concrete journal type, so that
    /// `DurableLoop`'s inlinable initializer and committer are compiled for the counter there, as
    /// in an adopter's code; through the generic scenario alone they ran unspecialised (a
    /// PostgreSQL profile: `swift_getGenericMetadata` 11.7 % of the process's samples, ~1.5 µs
    /// per event in the committer). Default: ``DurableScenario/open(_:_:id:)``.
    func openCounter(_ backend: Backend, _ journal: Journal, id: String) async throws -> DurableLoop<Int, Int>

    /// Nanoseconds per event for `events` pre-encoded events written with the journal's own
    /// `append`, no loop, `perTransaction` events in each, where that is more than
    /// ``bareAppends(events:perTransaction:)`` (a server's journal adds its fencing statements and
    /// round trips to the bare insert): the step between the limit and a durable `send`. `nil`
    /// (the default) where the limit already is the journal's append.
    func journalAppends(events: Int, perTransaction: Int) async throws -> Double?

    /// Brings the journals the scenario has just filled for the recovery runs to the state of a
    /// journal at rest, before any recovery is timed, so that the first backend timed pays no
    /// one-off cost the others do not. PostgreSQL: `VACUUM ANALYZE`, as autovacuum would, or the
    /// first reader of each freshly inserted row sets its hint bits (writing the page again).
    /// Default: nothing.
    func settle() async throws

    /// A journal that no other journal of the store writes into, applying `retention` if one is
    /// given, or `nil` when the store cannot make one (the retention and disk rows are then left
    /// out). The scenario asks for two, with and without retention, and compares their recovery
    /// and ``bytesOnDisk(_:)``: a journal shared with other measurements would count their
    /// events too. Default: `nil`.
    func separateJournal(retention: JournalRetention?) async throws -> Journal?

    /// The bytes a journal from ``separateJournal(retention:)`` takes on disk, or `nil` when the
    /// store cannot tell (the disk rows are then left out). Default: `nil`.
    func bytesOnDisk(_ journal: Journal) async throws -> Int?
}

extension DurableBenchmarkStore {
    public func openCounter(_ backend: Backend, _ journal: Journal, id: String) async throws -> DurableLoop<Int, Int> {
        try await DurableScenario.open(backend, journal, id: id)
    }
    public func journalAppends(events: Int, perTransaction: Int) async throws -> Double? { nil }
    public func settle() async throws {}
    public func separateJournal(retention: JournalRetention?) async throws -> Journal? { nil }
    public func bytesOnDisk(_ journal: Journal) async throws -> Int? { nil }
}

/// The default store: a new SQLite file (WAL, `PRAGMA synchronous = FULL`) for every journal, in
/// a temporary directory of its own that ``remove()`` deletes (of its own: two stores in one
/// process, as in the tests, must not write the same files or remove each other's).
///
/// The limit is the better of two ways to write the journal's transactions with no loop: the
/// journal's own `append`, and the same transaction — the `UPDATE` of the loop's head and the
/// `INSERT` of each event, in a file the journal made, with its pragmas — written by a thread of
/// its own through GRDB's synchronous API, which runs it on the calling thread. `append` is
/// asynchronous: each call hands its transaction to GRDB's writer queue and is resumed from it,
/// two hand-offs between threads per transaction, whose cost swings with where the scheduler puts
/// the threads, so that a loop, which hands off more often, can still come in under it; written in
/// place, the transaction pays no hand-off. With 1,024 events a transaction the hand-offs are spread thin and
/// the journal's `append` is the faster of the two.
struct SQLiteBenchmarkStore: DurableBenchmarkStore {
    let name = "SQLite"
    let limit = "the better of the SQLite journal's own appends and its transaction written on a thread of its own, no loop (1,024 or 1 events per transaction)"
    let directory: URL
    private let files = Lock(0)
    private let paths = Lock<[ObjectIdentifier: String]>([:])

    init() {
        directory = FileManager.default.temporaryDirectory.appending(path: "feedback-bench-durable-\(getpid())-\(UUID().uuidString)")
        // A directory that cannot be made fails the first journal, with SQLite's own message.
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func journal() throws -> SQLiteJournal {
        try open(retention: nil)
    }

    /// Every journal of this store is a file of its own.
    func separateJournal(retention: JournalRetention?) throws -> SQLiteJournal? {
        try open(retention: retention)
    }

    private func open(retention: JournalRetention?) throws -> SQLiteJournal {
        let path = newPath()
        let journal = try SQLiteJournal(path: path, retention: retention)
        paths.withLock { $0[ObjectIdentifier(journal)] = path }
        return journal
    }

    /// The database file and its write-ahead log, once the log is checkpointed: what the journal
    /// takes at rest (a live log holds up to ~1,000 pages more, whatever the journal's length).
    func bytesOnDisk(_ journal: SQLiteJournal) async throws -> Int? {
        guard let path = paths.withLock({ $0[ObjectIdentifier(journal)] }) else { return nil }
        try await journal.checkpoint()
        return [path, path + "-wal"].reduce(0) { total, file in
            total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0)
        }
    }

    private func newPath() -> String {
        let file = files.withLock { files in
            files += 1
            return files
        }
        return directory.appending(path: "\(file).sqlite").path
    }

    /// The better of the journal's own appends and ``transactionsOnAThread(events:perTransaction:)``,
    /// each into a new file.
    func bareAppends(events: Int, perTransaction: Int) async throws -> Double {
        let throughTheJournal = try await DurableScenario.bareAppends(try journal(), events: events, perTransaction: perTransaction)
        return Swift.min(throughTheJournal, try await transactionsOnAThread(events: events, perTransaction: perTransaction))
    }

    /// Nanoseconds per event for the journal's transactions of `events` pre-encoded events of the
    /// new loop "bare", `perTransaction` at a time, in a new file the journal made, written on a
    /// thread of its own.
    func transactionsOnAThread(events: Int, perTransaction: Int) async throws -> Double {
        let path = newPath()
        // The journal makes the file (its tables, WAL) and is closed; the pool opens it with the
        // journal's pragma, set once the pool is open: setting up WAL mode, GRDB sets NORMAL on its
        // writer after any `prepareDatabase`.
        _ = try SQLiteJournal(path: path)
        let pool = try DatabasePool(path: path)
        try await pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        let timed = await onDedicatedThread { () -> Result<UInt64, any Error> in
            Result { try Self.write(pool, events: events, perTransaction: perTransaction) }
        }
        return Double(try timed.get()) / Double(events)
    }

    /// Nanoseconds for the writes of ``transactionsOnAThread(events:perTransaction:)``, on the calling
    /// thread: GRDB runs a synchronous write there when its writer is idle.
    private static func write(_ pool: DatabasePool, events: Int, perTransaction: Int) throws -> UInt64 {
        let loop = "bare"
        try pool.write { db in
            try db.execute(sql: "INSERT INTO feedbackloop_loops (loop, epoch, head) VALUES (?, 1, 0)", arguments: [loop])
        }
        let payload = Data("1".utf8)
        var head = 0
        let start = Nanoseconds.now()
        while head < events {
            let last = Swift.min(head + perTransaction, events)
            try pool.write { db in
                try db.execute(
                    sql: "UPDATE feedbackloop_loops SET head = ? WHERE loop = ? AND epoch = ? AND head = ?",
                    arguments: [last, loop, 1, head])
                guard db.changesCount == 1 else { throw ScenarioFailure("durable limit: the head of '\(loop)' was not \(head)") }
                let insert = try db.cachedStatement(
                    sql: "INSERT INTO feedbackloop_events (loop, sequence, schema_version, payload) VALUES (?, ?, ?, ?)")
                for sequence in head + 1...last {
                    try insert.execute(arguments: [loop, sequence, 1, payload])
                }
            }
            head = last
        }
        return Nanoseconds.now() - start
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}

extension BenchmarkRunner {
    /// Runs the `durable` scenario alone on `store` and collects the report as ``run(progress:)``
    /// does (date, processors, load average): how a store from another package, such as
    /// PostgreSQL's, reports in the same form as `feedback-bench`.
    ///
    /// Runs on ``backends`` with ``size`` and ``durableRecoveryEvents``; ``scenarios`` and
    /// ``peer`` do not apply.
    public func runDurable(on store: some DurableBenchmarkStore, progress: Progress = { _ in }) async throws -> BenchmarkReport {
        let loadBefore = Self.loadAverage()
        let start = Nanoseconds.now()
        let report = try await DurableScenario(size: size, recoveryEvents: durableRecoveryEvents)
            .run(on: store, backends: backends, progress: progress)
        progress("durable: done in \(String(format: "%.1f", Double(Nanoseconds.now() - start) / 1e9)) s")
        return BenchmarkReport(
            date: Self.timestamp(),
            processors: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))),
            size: size,
            backends: backends.map(\.rawValue),
            scenarios: [report],
            allocator: allocator,
            loadAverage: [loadBefore, Self.loadAverage()].compactMap { $0 })
    }
}
