import FeedbackLoop
import FeedbackLoopDurable
import FeedbackLoopDurableTesting
import Foundation
import GRDB
import Testing

/// Rows altered by another tool: every value the SQLite journal reads is checked, and a bad one
/// is a `JournalError.malformedValue` naming the loop, the record and the column, never a trap.
@Suite("SQLite journal: rows altered by another tool")
struct SQLiteMalformedRowTests {
    /// A journal of loop "ledger" with events 1...3 and a snapshot at 2, then `damage` applied
    /// with raw SQL.
    static func journal(damagedBy damage: String) async throws -> String {
        let path = TemporaryFiles.path("malformed")
        let loop = try await DurableLoop(
            id: "ledger", journal: try SQLiteJournal(path: path), initial: Ledger.State(), reduce: Ledger.reduce,
            configuration: DurableConfiguration(snapshotEvery: 2))
        for amount in 1...3 { try await loop.sendAndWait(.add(amount)) }
        await loop.stop()
        let database = try DatabaseQueue(path: path)
        try await database.write { try $0.execute(sql: damage) }
        try database.close()
        return path
    }

    static func expectMalformed(
        _ operation: () async throws -> Void,
        sequence: UInt64?, column: String, found: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        do {
            try await operation()
            Issue.record("no error for \(column) holding \(found)", sourceLocation: sourceLocation)
        } catch let error as JournalError {
            #expect(
                error == .malformedValue(loop: "ledger", sequence: sequence, column: column, found: found),
                sourceLocation: sourceLocation)
            #expect(error.description.contains("'ledger'") && error.description.contains(column), sourceLocation: sourceLocation)
        } catch {
            Issue.record("not a JournalError: \(error)", sourceLocation: sourceLocation)
        }
    }

    static func events(_ path: String) async throws {
        _ = try await SQLiteJournal(path: path).events(loop: "ledger", after: 0, limit: 10)
    }

    static func snapshot(_ path: String) async throws {
        _ = try await SQLiteJournal(path: path).latestSnapshot(loop: "ledger")
    }

    static func acquire(_ path: String) async throws {
        _ = try await SQLiteJournal(path: path).acquire(loop: "ledger")
    }

    @Test func anEventsSequenceStoredAsText() async throws {
        let path = try await Self.journal(damagedBy: "UPDATE feedbackloop_events SET sequence = 'three' WHERE sequence = 3")
        await Self.expectMalformed({ try await Self.events(path) }, sequence: nil, column: "feedbackloop_events.sequence", found: "holds the text 'three'")
    }

    @Test func aNegativeEventSequence() async throws {
        let path = try await Self.journal(damagedBy: "UPDATE feedbackloop_events SET sequence = -3 WHERE sequence = 3")
        // Out of reach of `events(after:)`: event 3 is missing below the head.
        await Self.expectMalformed({ try await Self.events(path) },
            sequence: 3, column: "feedbackloop_events.sequence", found: "has no row for event 3, though feedbackloop_loops.head is 3")
    }

    @Test func aSchemaVersionStoredAsText() async throws {
        let path = try await Self.journal(damagedBy: "UPDATE feedbackloop_events SET schema_version = 'v1' WHERE sequence = 3")
        await Self.expectMalformed({ try await Self.events(path) }, sequence: 3, column: "feedbackloop_events.schema_version", found: "holds the text 'v1'")
    }

    @Test func aPayloadStoredAsAnInteger() async throws {
        let path = try await Self.journal(damagedBy: "UPDATE feedbackloop_events SET payload = 42 WHERE sequence = 3")
        await Self.expectMalformed({ try await Self.events(path) }, sequence: 3, column: "feedbackloop_events.payload", found: "holds the integer 42")
    }

    @Test func aPayloadStoredAsTextIsItsBytes() async throws {
        let path = try await Self.journal(damagedBy: #"UPDATE feedbackloop_events SET payload = '{"add":{"_0":30}}' WHERE sequence = 3"#)
        let records = try await SQLiteJournal(path: path).events(loop: "ledger", after: 0, limit: 10)
        #expect(records.last?.payload == Array(#"{"add":{"_0":30}}"#.utf8))
    }

    @Test func aSnapshotSequenceStoredAsText() async throws {
        let path = try await Self.journal(damagedBy: "UPDATE feedbackloop_snapshots SET sequence = 'two'")
        await Self.expectMalformed({ try await Self.snapshot(path) }, sequence: nil, column: "feedbackloop_snapshots.sequence", found: "holds the text 'two'")
    }

    @Test func aSnapshotPayloadStoredAsAReal() async throws {
        let path = try await Self.journal(damagedBy: "UPDATE feedbackloop_snapshots SET payload = 1.5")
        await Self.expectMalformed({ try await Self.snapshot(path) }, sequence: 2, column: "feedbackloop_snapshots.payload", found: "holds the real 1.5")
    }

    @Test func aNegativeHead() async throws {
        let path = try await Self.journal(damagedBy: "UPDATE feedbackloop_loops SET head = -1")
        await Self.expectMalformed({ try await Self.acquire(path) }, sequence: nil, column: "feedbackloop_loops.head", found: "holds the integer -1")
    }

    @Test func anEpochStoredAsText() async throws {
        // SQLite's `epoch + 1` would make it 1, an epoch an earlier owner held.
        let path = try await Self.journal(damagedBy: "UPDATE feedbackloop_loops SET epoch = 'abc'")
        await Self.expectMalformed({ try await Self.acquire(path) }, sequence: nil, column: "feedbackloop_loops.epoch", found: "holds the text 'abc'")
    }

    @Test func aNegativeEpoch() async throws {
        let path = try await Self.journal(damagedBy: "UPDATE feedbackloop_loops SET epoch = -5")
        await Self.expectMalformed({ try await Self.acquire(path) }, sequence: nil, column: "feedbackloop_loops.epoch", found: "holds the integer -5")
    }

    @Test func aHeadStoredAsTextWhileAnOwnerAppends() async throws {
        let path = try await Self.journal(damagedBy: "SELECT 1")
        let journal = try SQLiteJournal(path: path)
        let epoch = try await journal.acquire(loop: "ledger")
        let database = try DatabaseQueue(path: path)
        try await database.write { try $0.execute(sql: "UPDATE feedbackloop_loops SET head = 'x'") }
        try database.close()
        await Self.expectMalformed({
            try await journal.append(
                loop: "ledger", epoch: epoch, events: [JournalRecord(sequence: 4, schemaVersion: 1, payload: [])], snapshot: nil)
        }, sequence: nil, column: "feedbackloop_loops.head", found: "holds the text 'x'")
    }

    @Test(arguments: Backend.allCases)
    func recoveryStopsAtTheDamagedRecord(backend: Backend) async throws {
        let path = try await Self.journal(damagedBy: "UPDATE feedbackloop_events SET schema_version = 1.5 WHERE sequence = 3")
        await Self.expectMalformed({
            let loop = try await DurableLoop(
                id: "ledger", journal: try SQLiteJournal(path: path), initial: Ledger.State(), reduce: Ledger.reduce,
                backend: backend)
            await loop.stop()
        }, sequence: 3, column: "feedbackloop_events.schema_version", found: "holds the real 1.5")
    }
}
