import FeedbackLoop
import FeedbackLoopDurable
import Foundation

/// `durable`: a counter as a `DurableLoop` on a journal — SQLite's by default (`PRAGMA
/// synchronous = FULL`: an `fsync` per transaction), or any ``DurableBenchmarkStore`` — against
/// the same counter as a plain `Loop` in memory and against the store's own writes with no loop
/// at all (the limit).
///
/// Sends: `send` flat out from one thread, timed until the last event is reduced (group commit
/// fills transactions of up to 1,024 events), against bare writes of 1,024 pre-encoded events per
/// transaction; `sendAndWait` from one caller (a transaction per event), against bare writes of
/// one event per transaction; `sendAndWait` from 64 concurrent callers, whose events share
/// transactions. Each limit is timed again right before and right after every run of the row it
/// bounds, on every backend, the better of the two counting for that run, and reported as the
/// median of all its runs: a disk's flush rate drifts from one minute to the next, and a limit
/// timed only at the start is no floor for runs a minute later.
///
/// Recovery: opening a loop whose journal holds R events, with a snapshot every 1,000 events and
/// with none, timed from the call until the loop runs. R is `--recovery-events` (default a
/// tenth of `--events`, at most 100,000).
///
/// Retention, on a store that has journals of their own
/// (``DurableBenchmarkStore/separateJournal(retention:)``): the same R events with a snapshot
/// every 1,000 into a journal that keeps 2 snapshots (``retention``), the time to fill it and to
/// recover from it, and the disk both snapshotted journals take.
public struct DurableScenario: Sendable {
    public static let concurrentCallers = 64
    public static let snapshotEvery = 1_000
    public static let defaultMaximumRecoveryEvents = 100_000
    /// The policy of the retention rows.
    public static let retention = JournalRetention(keepingSnapshots: 2)

    public let size: BenchmarkSize
    public let recoveryEvents: Int

    public init(size: BenchmarkSize, recoveryEvents: Int? = nil) {
        self.size = size
        self.recoveryEvents = recoveryEvents ?? Swift.max(100, Swift.min(Self.defaultMaximumRecoveryEvents, size.events / 10))
    }

    /// Events per timed run of each send row: an `fsync` costs milliseconds, so far fewer than
    /// the in-memory scenarios send.
    var sends: Int { Swift.max(100, Swift.min(20_000, size.events / 50)) }
    var waitedSends: Int { Swift.max(10, Swift.min(200, size.events / 5_000)) }
    var concurrentRounds: Int { Swift.max(2, Swift.min(20, size.events / 50_000)) }

    /// Runs the scenario on SQLite: a journal file per run in a temporary directory, removed at
    /// the end.
    public func run(backends: [Backend], progress: Progress) async throws -> ScenarioReport {
        let store = SQLiteBenchmarkStore()
        defer { store.remove() }
        return try await run(on: store, backends: backends, progress: progress)
    }

    /// Runs the scenario on `store`: its journals for the durable loop, its own bare writes for
    /// the limit. The SQLite store is the default; another store (PostgreSQL's, in its own
    /// package) comes in through ``DurableBenchmarkStore``.
    ///
    /// Every run opens a loop id no earlier run used, so a store may hand out the same journal
    /// every time.
    public func run<Store: DurableBenchmarkStore>(
        on store: Store, backends: [Backend], progress: Progress
    ) async throws -> ScenarioReport {
        var report = ScenarioReport(scenario: .durable, limit: store.limit)
        let summary = "durable loop on \(store.name): group-commit sends vs in memory vs bare appends; recovery"
        if summary != Scenario.durable.summary { report.summary = summary }
        var loops = 0
        func nextID() -> String {
            loops += 1
            return "counter-\(loops)"
        }

        let grouped = "send, 1 sender, group commit (\(sends) events)"
        let waited = "sendAndWait, 1 caller: a transaction each (\(waitedSends) events)"
        let concurrent = "sendAndWait, \(Self.concurrentCallers) concurrent callers (\(Self.concurrentCallers * concurrentRounds) events)"
        let memory = "the same loop in memory, send (\(sends) events)"
        let withSnapshots = "recover \(recoveryEvents) events, snapshot every \(Self.snapshotEvery)"
        let withoutSnapshots = "recover \(recoveryEvents) events, no snapshot"
        let kept = "retention: keep \(Self.retention.snapshotsKept) snapshots"
        let fillPlain = "fill a journal: \(recoveryEvents) events, 4,096 per transaction, snapshot every \(Self.snapshotEvery)"
        let fillRetained = "\(fillPlain), \(kept)"
        let withRetention = "\(withSnapshots), \(kept)"
        let diskPlain = "journal on disk after \(recoveryEvents) events, snapshot every \(Self.snapshotEvery)"
        let diskRetained = "\(diskPlain), \(kept)"

        progress("durable: limits")
        let sends = self.sends, waitedSends = self.waitedSends
        let journalAppended = "the journal's own append, no loop (\(sends) events, 1,024 per transaction)"
        // A store's writes cost what its disk's flush costs, which drifts from one minute to the
        // next: each limit is timed again right before and right after every run it bounds, the
        // better of the two counting for that run, and its figure is the median of all its runs,
        // so that limit and loop are timed in the same minutes. A limit run timed only before is
        // the first writer after the row before it (the group-commit runs' 20,000 events, the
        // journals they closed), whose flushes are still under way, and pays for them where the
        // loop's run after it does not. One run here puts the rows in their order.
        var groupedLimits: [Double] = [], waitedLimits: [Double] = [], journalLimits: [Double] = []
        func timeGroupedLimits() async throws -> (bare: Double, journal: Double?) {
            (try await store.bareAppends(events: sends, perTransaction: 1_024),
             try await store.journalAppends(events: sends, perTransaction: 1_024))
        }
        func timeWaitedLimit() async throws -> Double {
            try await store.bareAppends(events: waitedSends, perTransaction: 1)
        }
        /// Times `run` between two runs of the grouped limits and keeps the better of each pair.
        func besideGroupedLimits(_ run: () async throws -> Double) async throws -> Double {
            let before = try await timeGroupedLimits()
            let value = try await run()
            let after = try await timeGroupedLimits()
            groupedLimits.append(Swift.min(before.bare, after.bare))
            if let first = before.journal, let second = after.journal { journalLimits.append(Swift.min(first, second)) }
            return value
        }
        /// Times `run` between two runs of the one-event-per-transaction limit.
        func besideWaitedLimit(_ run: () async throws -> Double) async throws -> Double {
            let before = try await timeWaitedLimit()
            let value = try await run()
            waitedLimits.append(Swift.min(before, try await timeWaitedLimit()))
            return value
        }
        func recordLimits(_ report: inout ScenarioReport) {
            func median(_ runs: [Double]) -> Double { runs.sorted()[runs.count / 2] }
            report.recordLimit(grouped, "ns/event", .lower, value: median(groupedLimits))
            report.recordLimit(waited, "ns/event", .lower, value: median(waitedLimits))
            if !journalLimits.isEmpty { report.recordLimit(journalAppended, "ns/event", .lower, value: median(journalLimits)) }
        }
        let firstGrouped = try await timeGroupedLimits()
        groupedLimits.append(firstGrouped.bare)
        if let journal = firstGrouped.journal { journalLimits.append(journal) }
        waitedLimits.append(try await timeWaitedLimit())
        recordLimits(&report)
        progress("durable: filling a journal of \(recoveryEvents) events, twice")
        // The snapshotted journal is compared with the retained one on disk: a journal of its own
        // where the store has them, so that no other run's events count.
        let separate = try await store.separateJournal(retention: nil)
        let snapshotted: Store.Journal
        if let separate { snapshotted = separate } else { snapshotted = try await store.journal() }
        let snapshottedID = nextID()
        let plain = try await store.journal(), plainID = nextID()
        let fillStart = Nanoseconds.now()
        try await Self.fill(snapshotted, id: snapshottedID, events: recoveryEvents, snapshotEvery: Self.snapshotEvery)
        let fillTime = Double(Nanoseconds.now() - fillStart) / Double(recoveryEvents)
        try await Self.fill(plain, id: plainID, events: recoveryEvents, snapshotEvery: nil)
        let retained = separate == nil ? nil : try await store.separateJournal(retention: Self.retention)
        let retainedID = nextID()
        if let retained {
            progress("durable: filling a journal of \(recoveryEvents) events with retention")
            report.recordLimit(fillPlain, "ns/event", .lower, value: fillTime)
            let start = Nanoseconds.now()
            try await Self.fill(retained, id: retainedID, events: recoveryEvents, snapshotEvery: Self.snapshotEvery)
            report.recordLimit(fillRetained, "ns/event", .lower, value: Double(Nanoseconds.now() - start) / Double(recoveryEvents))
        }
        try await store.settle()

        for backend in backends {
            try await report.measure(backend) { report in
                progress("durable: \(grouped), \(backend)")
                report.record(grouped, "ns/event", .lower, backend: backend.rawValue, value: try await median(of: 3) {
                    try await besideGroupedLimits {
                        let loop = try await store.openCounter(backend, try await store.journal(), id: nextID())
                        return try await Self.measureSends(backend, loop, events: sends)
                    }
                })
                progress("durable: \(waited), \(backend)")
                report.record(waited, "ns/event", .lower, backend: backend.rawValue, value: try await median(of: 3) {
                    try await besideWaitedLimit {
                        let loop = try await store.openCounter(backend, try await store.journal(), id: nextID())
                        return try await Self.measureWaited(backend, loop, callers: 1, rounds: waitedSends)
                    }
                })
                progress("durable: \(concurrent), \(backend)")
                let rounds = concurrentRounds
                report.record(concurrent, "ns/event", .lower, backend: backend.rawValue, value: try await median(of: 3) {
                    let loop = try await store.openCounter(backend, try await store.journal(), id: nextID())
                    return try await Self.measureWaited(backend, loop, callers: Self.concurrentCallers, rounds: rounds)
                })
                progress("durable: \(memory), \(backend)")
                report.record(memory, "ns/event", .lower, backend: backend.rawValue, value: try await median(of: 3) {
                    try await Self.measureInMemory(backend, events: sends)
                })
                progress("durable: recovery, \(backend)")
                let recoveryEvents = self.recoveryEvents
                report.record(withSnapshots, "ms", .lower, backend: backend.rawValue, value: try await median(of: 3) {
                    try await Self.measureRecovery(backend, events: recoveryEvents) {
                        try await store.openCounter(backend, snapshotted, id: snapshottedID)
                    }
                })
                report.record(withoutSnapshots, "ms", .lower, backend: backend.rawValue, value: try await median(of: 1) {
                    try await Self.measureRecovery(backend, events: recoveryEvents) {
                        try await store.openCounter(backend, plain, id: plainID)
                    }
                })
                if let retained {
                    report.record(withRetention, "ms", .lower, backend: backend.rawValue, value: try await median(of: 3) {
                        try await Self.measureRecovery(backend, events: recoveryEvents) {
                            try await store.openCounter(backend, retained, id: retainedID)
                        }
                    })
                    // A property of the journal, not of the backend: the same in every column.
                    if let plainBytes = try await store.bytesOnDisk(snapshotted), let retainedBytes = try await store.bytesOnDisk(retained) {
                        report.record(diskPlain, "MB", .lower, backend: backend.rawValue, value: Double(plainBytes) / 1e6)
                        report.record(diskRetained, "MB", .lower, backend: backend.rawValue, value: Double(retainedBytes) / 1e6)
                    }
                }
            }
        }
        recordLimits(&report)
        return report
    }

    // MARK: The systems

    /// The counter: adds each event. Inlinable, so that a store in another module can open it
    /// (``DurableBenchmarkStore/openCounter(_:_:id:)``) with `DurableLoop` compiled for its own
    /// journal type.
    @inlinable
    public static func open(_ backend: Backend, _ journal: some EventJournal, id: String = "counter") async throws -> DurableLoop<Int, Int> {
        try await DurableLoop(
            id: id, journal: journal, initial: 0, reduce: { $0 += $1 }, backend: backend,
            configuration: DurableConfiguration(snapshotEvery: snapshotEvery))
    }

    // MARK: Measuring

    /// Nanoseconds per event appended straight to the journal of the new loop `id`,
    /// `perTransaction` at a time.
    public static func bareAppends(
        _ journal: some EventJournal, id: String = "bare", events: Int, perTransaction: Int
    ) async throws -> Double {
        let epoch = try await journal.acquire(loop: id)
        let payload = Array("1".utf8)
        var head: UInt64 = 0
        let elapsed = try await Nanoseconds.measure {
            while head < UInt64(events) {
                let count = Swift.min(perTransaction, events - Int(head))
                let records = (1...count).map { JournalRecord(sequence: head + UInt64($0), schemaVersion: 1, payload: payload) }
                try await journal.append(loop: id, epoch: epoch, events: records, snapshot: nil)
                head += UInt64(count)
            }
        }
        return Double(elapsed) / Double(events)
    }

    /// Nanoseconds per event for `events` sends from one thread into the new counter `loop`,
    /// until the last is reduced; stops the loop.
    public static func measureSends(_ backend: Backend, _ loop: DurableLoop<Int, Int>, events: Int) async throws -> Double {
        let elapsed = try await Nanoseconds.measure {
            for _ in 1..<events { try loop.send(1) }
            let last = try await loop.sendAndWait(1)
            guard last == events else { throw ScenarioFailure("durable, \(backend): the counter is \(last), not \(events)") }
        }
        guard loop.sequence == UInt64(events) else {
            throw ScenarioFailure("durable, \(backend): journaled \(loop.sequence) events, not \(events)")
        }
        await loop.stop()
        return Double(elapsed) / Double(events)
    }

    /// Nanoseconds per event for `callers` concurrent `sendAndWait` callers, `rounds` each, into
    /// the new counter `loop`; stops the loop.
    public static func measureWaited(_ backend: Backend, _ loop: DurableLoop<Int, Int>, callers: Int, rounds: Int) async throws -> Double {
        let elapsed = try await Nanoseconds.measure {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<callers {
                    group.addTask { for _ in 0..<rounds { try await loop.sendAndWait(1) } }
                }
                try await group.waitForAll()
            }
        }
        guard loop.state == callers * rounds else {
            throw ScenarioFailure("durable, \(backend): the counter is \(loop.state), not \(callers * rounds)")
        }
        await loop.stop()
        return Double(elapsed) / Double(callers * rounds)
    }

    /// Nanoseconds per event for the same counter as a plain loop in memory.
    public static func measureInMemory(_ backend: Backend, events: Int) async throws -> Double {
        let loop = Loop(initial: 0, reduce: { (count: inout Int, add: Int) in count += add }, backend: backend)
        let elapsed = try await Nanoseconds.measure {
            for _ in 1..<events { loop.send(1) }
            let last = try await loop.sendAndWait(1)
            guard last == events else { throw ScenarioFailure("durable in memory, \(backend): the counter is \(last)") }
        }
        await loop.stop()
        return Double(elapsed) / Double(events)
    }

    /// Journals `events` events of 1 (and a snapshot every `snapshotEvery`) straight into the
    /// loop `id`, as a loop would have.
    public static func fill(_ journal: some EventJournal, id: String = "counter", events: Int, snapshotEvery: Int?) async throws {
        let epoch = try await journal.acquire(loop: id)
        let payload = Array("1".utf8)
        var head = 0
        while head < events {
            let count = Swift.min(4_096, events - head)
            let records = (1...count).map { JournalRecord(sequence: UInt64(head + $0), schemaVersion: 1, payload: payload) }
            let last = head + count
            var snapshot: JournalRecord?
            if let snapshotEvery, last / snapshotEvery > head / snapshotEvery {
                let at = last / snapshotEvery * snapshotEvery
                // The snapshot must be the state after its own event: split the batch there.
                let before = Array(records.prefix(at - head))
                try await journal.append(loop: id, epoch: epoch, events: before, snapshot:
                    JournalRecord(sequence: UInt64(at), schemaVersion: 1, payload: Array("\(at)".utf8)))
                head = at
                continue
            }
            try await journal.append(loop: id, epoch: epoch, events: records, snapshot: snapshot)
            head = last
            snapshot = nil
        }
        try await journal.release(loop: id, epoch: epoch)
    }

    /// Milliseconds for `open` to recover a counter of `events` events, after checking its state.
    public static func measureRecovery(
        _ backend: Backend, events: Int, open: () async throws -> DurableLoop<Int, Int>
    ) async throws -> Double {
        var recovered: DurableLoop<Int, Int>?
        let elapsed = try await Nanoseconds.measure {
            recovered = try await open()
        }
        guard let loop = recovered, loop.state == events, loop.recoveredSequence == UInt64(events) else {
            throw ScenarioFailure("durable recovery, \(backend): recovered \(String(describing: recovered?.state)), not \(events)")
        }
        // Stopping releases ownership, so the next run of the same id acquires the loop at once.
        await loop.stop()
        return Double(elapsed) / 1e6
    }
}
