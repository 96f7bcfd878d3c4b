import GRDB
import Testing

@testable import FeedbackLoopDurable

/// The durability a journal is opened with is the one its writes get: GRDB's pool sets
/// `synchronous = NORMAL` on its writer when it sets up WAL mode, after the connection's own
/// set-up, so `.full` must be applied after the pool is open.
@Suite("SQLite: the synchronous setting")
struct SynchronousTests {
    @Test(arguments: SQLiteJournal.Synchronous.allCases)
    func theWriterWritesWithTheSettingAskedFor(synchronous: SQLiteJournal.Synchronous) async throws {
        let journal = try SQLiteJournal(path: TemporaryFiles.path("synchronous"), synchronous: synchronous)
        // 2: FULL, 1: NORMAL.
        let applied = try await journal.database.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        #expect(applied == (synchronous == .full ? 2 : 1))
    }
}
