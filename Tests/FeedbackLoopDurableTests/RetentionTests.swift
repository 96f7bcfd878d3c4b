import FeedbackLoop
import FeedbackLoopDurable
import FeedbackLoopDurableTesting
import Foundation
import GRDB
import Testing

/// What only a file can show about retention: a prune that fails half-way leaves the journal as
/// it was.
@Suite("Retention: a failed prune")
struct RetentionTests {
    /// A trigger aborts the prune after it deleted some events: the whole append — events,
    /// snapshot, deletions — is rolled back, the loop stops on the error, and a restarted loop
    /// recovers every event journaled before it.
    @Test(arguments: Backend.allCases)
    func aPruneThatFailsHalfwayLeavesARecoverableJournal(backend: Backend) async throws {
        let path = TemporaryFiles.path("prune")
        let retention = JournalRetention(keepingSnapshots: 1)
        let configuration = DurableConfiguration(snapshotEvery: 4)
        let loop = try await DurableLoop(
            id: "ledger", journal: try SQLiteJournal(path: path, retention: retention), initial: Ledger.State(),
            reduce: Ledger.reduce, backend: backend, configuration: configuration)
        for amount in 1...7 { try await loop.sendAndWait(.add(amount)) }
        // Events 1...3 were pruned at the snapshot at 4; the next prune (at 8) dies on event 6,
        // after deleting 4 and 5.
        let database = try DatabaseQueue(path: path)
        try await database.write { db in
            try db.execute(sql: """
                CREATE TRIGGER crash_mid_prune BEFORE DELETE ON feedbackloop_events WHEN old.sequence = 6
                BEGIN SELECT RAISE(ABORT, 'the process died here'); END
                """)
        }
        await #expect(throws: (any Error).self) { try await loop.sendAndWait(.add(8)) }
        await loop.waitUntilStopped()
        #expect(loop.failure != nil)
        await loop.stop()
        try await database.write { db in try db.execute(sql: "DROP TRIGGER crash_mid_prune") }
        try database.close()

        let journal = try SQLiteJournal(path: path)
        #expect(try await journal.events(loop: "ledger", after: 0, limit: 100).map(\.sequence) == Array(4...7))
        #expect(try await journal.snapshots(loop: "ledger").map(\.sequence) == [4])
        let recovered = try await DurableLoop(
            id: "ledger", journal: try SQLiteJournal(path: path, retention: retention), initial: Ledger.State(),
            reduce: Ledger.reduce, backend: backend, configuration: configuration)
        var expected = Ledger.State()
        for amount in 1...7 { Ledger.reduce(&expected, .add(amount)) }
        #expect(recovered.state == expected && recovered.recoveredSequence == 7)
        try await recovered.sendAndWait(.add(8))
        await recovered.stop()
        #expect(try await journal.events(loop: "ledger", after: 0, limit: 100).map(\.sequence) == [8])
    }
}
