import FeedbackLoop
import FeedbackLoopDurable
import Foundation

/// `durable`: a counter as a `DurableLoop` on the SQLite journal (`PRAGMA synchronous = FULL`:
/// an `fsync` per transaction), against the same counter as a plain `Loop` in memory and against
/// the journal's own appends with no loop at all (the limit).
///
/// Sends: `send` flat out from one thread, timed until the last event is reduced (group commit
/// fills transactions of up to 1,024 events), against appends of 1,024 pre-encoded events per
/// transaction; `sendAndWait` from one caller (a transaction per event), against appends of one
/// event per transaction; `sendAndWait` from 64 concurrent callers, whose events share
/// transactions.
///
/// Recovery: opening a loop whose journal holds R events, with a snapshot every 1,000 events and
/// with none, timed from the call until the loop runs. R is `--recovery-events` (default a
/// tenth of `--events`, at most 100,000).
public struct DurableScenario: Sendable {
    public static let concurrentCallers = 64
    public static let snapshotEvery = 1_000
    public static let defaultMaximumRecoveryEvents = 100_000

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

    public func run(backends: [Backend], progress: Progress) async throws -> ScenarioReport {
        var report = ScenarioReport(
            scenario: .durable,
            limit: "the SQLite journal's own appends, no loop (1,024 or 1 events per transaction)")
        let directory = FileManager.default.temporaryDirectory.appending(path: "feedback-bench-durable-\(getpid())")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var files = 0
        func journal() throws -> SQLiteJournal {
            files += 1
            return try SQLiteJournal(path: directory.appending(path: "\(files).sqlite").path)
        }

        let grouped = "send, 1 sender, group commit (\(sends) events)"
        let waited = "sendAndWait, 1 caller: a transaction each (\(waitedSends) events)"
        let concurrent = "sendAndWait, \(Self.concurrentCallers) concurrent callers (\(Self.concurrentCallers * concurrentRounds) events)"
        let memory = "the same loop in memory, send (\(sends) events)"
        let withSnapshots = "recover \(recoveryEvents) events, snapshot every \(Self.snapshotEvery)"
        let withoutSnapshots = "recover \(recoveryEvents) events, no snapshot"

        progress("durable: limits")
        let sends = self.sends, waitedSends = self.waitedSends
        report.recordLimit(grouped, "ns/event", .lower, value: try await median(of: 3) {
            try await Self.bareAppends(try journal(), events: sends, perTransaction: 1_024)
        })
        report.recordLimit(waited, "ns/event", .lower, value: try await median(of: 3) {
            try await Self.bareAppends(try journal(), events: waitedSends, perTransaction: 1)
        })
        progress("durable: filling a journal of \(recoveryEvents) events, twice")
        let snapshotted = try journal(), plain = try journal()
        try await Self.fill(snapshotted, events: recoveryEvents, snapshotEvery: Self.snapshotEvery)
        try await Self.fill(plain, events: recoveryEvents, snapshotEvery: nil)

        for backend in backends {
            try await report.measure(backend) { report in
                progress("durable: \(grouped), \(backend)")
                report.record(grouped, "ns/event", .lower, backend: backend.rawValue, value: try await median(of: 3) {
                    try await Self.measureSends(backend, try journal(), events: sends)
                })
                progress("durable: \(waited), \(backend)")
                report.record(waited, "ns/event", .lower, backend: backend.rawValue, value: try await median(of: 3) {
                    try await Self.measureWaited(backend, try journal(), callers: 1, rounds: waitedSends)
                })
                progress("durable: \(concurrent), \(backend)")
                let rounds = concurrentRounds
                report.record(concurrent, "ns/event", .lower, backend: backend.rawValue, value: try await median(of: 3) {
                    try await Self.measureWaited(backend, try journal(), callers: Self.concurrentCallers, rounds: rounds)
                })
                progress("durable: \(memory), \(backend)")
                report.record(memory, "ns/event", .lower, backend: backend.rawValue, value: try await median(of: 3) {
                    try await Self.measureInMemory(backend, events: sends)
                })
                progress("durable: recovery, \(backend)")
                let recoveryEvents = self.recoveryEvents
                report.record(withSnapshots, "ms", .lower, backend: backend.rawValue, value: try await median(of: 3) {
                    try await Self.measureRecovery(backend, snapshotted, events: recoveryEvents)
                })
                report.record(withoutSnapshots, "ms", .lower, backend: backend.rawValue, value: try await median(of: 1) {
                    try await Self.measureRecovery(backend, plain, events: recoveryEvents)
                })
            }
        }
        return report
    }

    // MARK: The systems

    /// The counter: adds each event.
    public static func open(_ backend: Backend, _ journal: SQLiteJournal, id: String = "counter") async throws -> DurableLoop<Int, Int> {
        try await DurableLoop(
            id: id, journal: journal, initial: 0, reduce: { $0 += $1 }, backend: backend,
            configuration: DurableConfiguration(snapshotEvery: snapshotEvery))
    }

    static func seconds(_ nanoseconds: UInt64) -> Double { Double(nanoseconds) / 1e9 }

    // MARK: Measuring

    /// Nanoseconds per event appended straight to the journal, `perTransaction` at a time.
    public static func bareAppends(_ journal: SQLiteJournal, events: Int, perTransaction: Int) async throws -> Double {
        let epoch = try await journal.acquire(loop: "bare")
        let payload = Array("1".utf8)
        var head: UInt64 = 0
        let elapsed = try await Nanoseconds.measure {
            while head < UInt64(events) {
                let count = Swift.min(perTransaction, events - Int(head))
                let records = (1...count).map { JournalRecord(sequence: head + UInt64($0), schemaVersion: 1, payload: payload) }
                try await journal.append(loop: "bare", epoch: epoch, events: records, snapshot: nil)
                head += UInt64(count)
            }
        }
        return Double(elapsed) / Double(events)
    }

    /// Nanoseconds per event for `events` sends from one thread, until the last is reduced.
    public static func measureSends(_ backend: Backend, _ journal: SQLiteJournal, events: Int) async throws -> Double {
        let loop = try await open(backend, journal)
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

    /// Nanoseconds per event for `callers` concurrent `sendAndWait` callers, `rounds` each.
    public static func measureWaited(_ backend: Backend, _ journal: SQLiteJournal, callers: Int, rounds: Int) async throws -> Double {
        let loop = try await open(backend, journal)
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
    /// loop `counter`, as a loop would have.
    public static func fill(_ journal: SQLiteJournal, events: Int, snapshotEvery: Int?) async throws {
        let epoch = try await journal.acquire(loop: "counter")
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
                try await journal.append(loop: "counter", epoch: epoch, events: before, snapshot:
                    JournalRecord(sequence: UInt64(at), schemaVersion: 1, payload: Array("\(at)".utf8)))
                head = at
                continue
            }
            try await journal.append(loop: "counter", epoch: epoch, events: records, snapshot: snapshot)
            head = last
            snapshot = nil
        }
        try await journal.release(loop: "counter", epoch: epoch)
    }

    /// Milliseconds to open (recover) the counter from `journal`, after checking its state.
    public static func measureRecovery(_ backend: Backend, _ journal: SQLiteJournal, events: Int) async throws -> Double {
        var recovered: DurableLoop<Int, Int>?
        let elapsed = try await Nanoseconds.measure {
            recovered = try await open(backend, journal)
        }
        guard let loop = recovered, loop.state == events, loop.recoveredSequence == UInt64(events) else {
            throw ScenarioFailure("durable recovery, \(backend): recovered \(String(describing: recovered?.state)), not \(events)")
        }
        // Stopping releases nothing the next run needs: SQLite's acquire always takes the loop.
        await loop.stop()
        return Double(elapsed) / 1e6
    }
}
