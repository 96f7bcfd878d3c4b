import FeedbackLoop
import FeedbackLoopDurable
import FeedbackLoopDurableTesting
import Foundation
import GRDB
import Testing

/// Journals a loop must refuse to recover from, with an error that names the loop and the
/// record, having appended nothing.
@Suite("Bad journals")
struct BadJournalTests {
    static func sqlitePath() -> String {
        TemporaryFiles.path("bad")
    }

    enum Store: String, CaseIterable, Sendable {
        case memory, sqlite
    }

    /// A new SQLite file holding `events` events of the loop "ledger", written by `backend`, with no
    /// snapshot, its write-ahead log checkpointed into it: the file that the damage tests damage.
    static func ledgerFile(events: Int, backend: Backend) async throws -> String {
        let path = sqlitePath()
        do {
            let loop = try await DurableLoop(
                id: "ledger", journal: try SQLiteJournal(path: path), initial: Ledger.State(), reduce: Ledger.reduce,
                backend: backend, configuration: DurableConfiguration(snapshotEvery: nil))
            for amount in 1..<events { try loop.send(.add(amount)) }
            try await loop.sendAndWait(.add(0))
            await loop.stop()
        }
        let database = try DatabaseQueue(path: path)
        try await database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try database.close()
        return path
    }

    static func journal(_ store: Store) throws -> any EventJournal {
        switch store {
        case .memory: InMemoryJournal()
        case .sqlite: try SQLiteJournal(path: sqlitePath())
        }
    }

    /// A journal file cut short, as by a copy that ran out of disk: SQLite refuses to open it,
    /// and the loop's error names the loop and the last event read intact, with nothing
    /// written to the file.
    @Test(arguments: Backend.allCases)
    func aTruncatedFile(backend: Backend) async throws {
        let written = 3_000
        let path = try await Self.ledgerFile(events: written, backend: backend)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(size / 2))
        try handle.close()
        let truncated = try Data(contentsOf: URL(fileURLWithPath: path))

        let journal = try SQLiteJournal(path: path)
        do {
            let loop = try await DurableLoop(
                id: "ledger", journal: journal, initial: Ledger.State(), reduce: Ledger.reduce, backend: backend)
            await loop.stop()
            Issue.record("a loop recovered from a journal cut in half, at \(loop.recoveredSequence)")
        } catch let error as DurableLoopError {
            guard case .damagedJournal(let loop, let sequence, let reason) = error else { throw error }
            #expect(loop == "ledger")
            #expect(sequence > 0 && sequence < UInt64(written), "\(error)")
            #expect(reason.contains("malformed"), "\(error)")
            #expect(error.description.contains("'ledger'") && error.description.contains("after event \(sequence)"), "\(error)")
            // The events up to the one named are there, intact; the next is not: it cannot be
            // read, or (cut in the middle of its page) it reads as something else.
            let intact = try await journal.events(loop: "ledger", after: 0, limit: Int(sequence))
            #expect(intact.map(\.sequence) == Array(1...sequence))
            #expect(try intact.last.map { try JSONDecoder().decode(Ledger.Event.self, from: Data($0.payload)) } == .add(Int(sequence)))
            let next = try? await journal.events(loop: "ledger", after: sequence, limit: 1).first
            #expect(next.flatMap { try? JSONDecoder().decode(Ledger.Event.self, from: Data($0.payload)) } != .add(Int(sequence) + 1))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == truncated, "the damaged file was written to")
    }

    /// A page of the loop's events overwritten in the middle of the file: SQLite opens the file
    /// without noticing (it reads that page only when recovery reaches it), and the acquire reads
    /// what recovery will before it takes an epoch, so the loop is refused naming the last event
    /// read intact, with nothing written: its row keeps its epoch and head. (The file's bytes are
    /// no criterion here: GRDB's pool writes to a sound-looking file whenever it opens one, to
    /// create the write-ahead log.)
    @Test(arguments: Backend.allCases)
    func aPageDamagedPastTheOpen(backend: Backend) async throws {
        let written = 3_000
        let path = try await Self.ledgerFile(events: written, backend: backend)
        let database = try DatabaseQueue(path: path)
        let pageSize = try await database.read { db in try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4_096 }
        try database.close()
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let marker = Data(#"{"add":{"_0":1500}}"#.utf8)
        let found = try #require(bytes.range(of: marker), "event 1500 is not in the file")
        let page = found.lowerBound / pageSize * pageSize
        // The b-tree page's header: its type, free blocks and cell count, as garbage.
        bytes.replaceSubrange(page..<(page + 12), with: [UInt8](repeating: 0xFF, count: 12))
        try bytes.write(to: URL(fileURLWithPath: path))

        do {
            let loop = try await DurableLoop(
                id: "ledger", journal: try SQLiteJournal(path: path), initial: Ledger.State(), reduce: Ledger.reduce,
                backend: backend)
            await loop.stop()
            Issue.record("a loop recovered from a journal with a damaged page, at \(loop.recoveredSequence)")
        } catch let error as DurableLoopError {
            guard case .damagedJournal(let loop, let sequence, let reason) = error else { throw error }
            #expect(loop == "ledger")
            #expect(sequence > 0 && sequence < 1_500, "\(error)")
            #expect(reason.contains("malformed"), "\(error)")
        }
        var readOnly = Configuration()
        readOnly.readonly = true
        let reader = try DatabaseQueue(path: path, configuration: readOnly)
        let row = try reader.read { db in try Row.fetchOne(db, sql: "SELECT epoch, head FROM feedbackloop_loops WHERE loop = 'ledger'") }
        try reader.close()
        #expect(row?["epoch"] == 1 && row?["head"] == written, "the refused loop's row: \(String(describing: row))")
    }

    /// A state's JSON among the events (a snapshot row copied into the events table): it decodes
    /// as no event, and recovery names the loop and the record.
    @Test(arguments: Backend.allCases, Store.allCases)
    func aRecordOfAnotherType(backend: Backend, store: Store) async throws {
        let journal = try Self.journal(store)
        let epoch = try await journal.acquire(loop: "ledger")
        try await journal.append(
            loop: "ledger", epoch: epoch,
            events: [
                JournalRecord(sequence: 1, schemaVersion: 1, payload: Array(#"{"add":{"_0":1}}"#.utf8)),
                JournalRecord(sequence: 2, schemaVersion: 1, payload: Array(#"{"total":1,"count":1,"charged":[]}"#.utf8)),
            ],
            snapshot: nil)
        await Self.expectUndecodable(journal, loop: "ledger", sequence: 2, backend: backend)
    }

    /// Two features under one id: the second is refused by the feature the journal recorded,
    /// before it reads a record, and appends nothing.
    @Test(arguments: Backend.allCases, Store.allCases)
    func twoFeaturesUnderOneID(backend: Backend, store: Store) async throws {
        let journal = try Self.journal(store)
        let tally = try await DurableLoop(
            id: "shared", journal: journal, initial: Tally.State(), reduce: Tally.reduce, backend: backend)
        try await tally.sendAndWait(.rename(name: "A"))
        await tally.stop()
        await #expect {
            let ledger = try await DurableLoop(id: "shared", journal: journal, initial: Ledger.State(), reduce: Ledger.reduce, backend: backend)
            await ledger.stop()
        } throws: { error in
            guard case DurableLoopError.featureMismatch("shared", let journaled, let opening) = error else { return false }
            return journaled.hasSuffix("Tally.State, FeedbackLoopDurableTesting.Tally.Event")
                && opening.hasSuffix("Ledger.State, FeedbackLoopDurableTesting.Ledger.Event")
        }
        #expect(try await journal.events(loop: "shared", after: 0, limit: 10).map(\.sequence) == [1])
    }

    /// Two loops whose ids differ only after a NUL character: SQLite gets the ids as C strings,
    /// so the second would open the first's history as its own. The journal refuses the id,
    /// naming it, and writes nothing (the first loop's epoch and events are as they were).
    @Test(arguments: Backend.allCases)
    func aLoopIDThatSQLiteWouldCutShort(backend: Backend) async throws {
        let path = Self.sqlitePath()
        let first = try await DurableLoop(
            id: "job", journal: try SQLiteJournal(path: path), initial: Ledger.State(), reduce: Ledger.reduce, backend: backend)
        try await first.sendAndWait(.add(5))
        await first.stop()
        do {
            let second = try await DurableLoop(
                id: "job\0other", journal: try SQLiteJournal(path: path), initial: Ledger.State(), reduce: Ledger.reduce,
                backend: backend)
            await second.stop()
            Issue.record("the loop 'job\\0other' opened, with the state \(second.state)")
        } catch let error as JournalError {
            #expect(error.description.contains("'job\\0other'") && error.description.contains("NUL"), "\(error)")
        }
        let journal = try SQLiteJournal(path: path)
        #expect(try await journal.loopIDs() == ["job"])
        #expect(try await journal.events(loop: "job", after: 0, limit: 10).map(\.sequence) == [1])
        #expect(try await journal.acquire(loop: "job") == 2, "the refused id took the loop 'job' over")
    }

    /// Recovering a `Ledger` from `journal` fails on record `sequence` of `loop`, and appends
    /// nothing.
    static func expectUndecodable(
        _ journal: any EventJournal, loop id: String, sequence: UInt64, backend: Backend,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let before = (try? await journal.events(loop: id, after: 0, limit: 100))?.map(\.sequence)
        do {
            let loop = try await DurableLoop(id: id, journal: journal, initial: Ledger.State(), reduce: Ledger.reduce, backend: backend)
            await loop.stop()
            Issue.record("recovered past a record of another type, at \(loop.recoveredSequence)", sourceLocation: sourceLocation)
        } catch DurableLoopError.undecodableEvent(let loop, let found, _) {
            #expect(loop == id && found == sequence, sourceLocation: sourceLocation)
        } catch {
            Issue.record("not undecodableEvent: \(error)", sourceLocation: sourceLocation)
        }
        let after = (try? await journal.events(loop: id, after: 0, limit: 100))?.map(\.sequence)
        #expect(before == after, "nothing is appended by a failed recovery", sourceLocation: sourceLocation)
    }
}
