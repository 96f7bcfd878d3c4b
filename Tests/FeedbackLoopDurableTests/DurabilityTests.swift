import FeedbackLoop
import FeedbackLoopDurable
import FeedbackLoopDurableTesting
import Foundation
import Testing

/// The durability suite on every store of this package and every backend: the SQLite store, each
/// test with a file of its own, and the test kit's in-memory journal, each test with its own
/// journal that every "new handle" shares. (The PostgreSQL store runs it in its own package.)
@Suite("Durability: every store of this package")
struct DurabilityTests {
    enum Store: CaseIterable, Sendable, CustomStringConvertible {
        case sqlite, inMemory

        var description: String {
            switch self {
            case .sqlite: "SQLite"
            case .inMemory: "in memory"
            }
        }
    }

    static let cases = Store.allCases.flatMap { store in Backend.allCases.map { (store, $0) } }

    static func environment(_ store: Store, _ backend: Backend) -> DurabilityEnvironment {
        switch store {
        case .sqlite:
            let path = TemporaryFiles.path("durable")
            return DurabilityEnvironment(
                backend: backend,
                makeJournal: { try SQLiteJournal(path: path) },
                depose: { loop in _ = try await SQLiteJournal(path: path).acquire(loop: loop) },
                makeJournalWithRetention: { try SQLiteJournal(path: path, retention: $0) })
        case .inMemory:
            let journal = InMemoryJournal()
            return DurabilityEnvironment(
                backend: backend,
                makeJournal: { journal },
                depose: { loop in _ = try await journal.acquire(loop: loop) },
                makeJournalWithRetention: { journal.applying($0) })
        }
    }

    @Test(arguments: cases)
    func persistBeforeAct(store: Store, backend: Backend) async throws {
        try await DurabilityChecks.persistBeforeAct(Self.environment(store, backend))
    }

    @Test(arguments: cases)
    func groupCommit(store: Store, backend: Backend) async throws {
        try await DurabilityChecks.groupCommit(Self.environment(store, backend))
    }

    @Test(arguments: cases)
    func snapshots(store: Store, backend: Backend) async throws {
        try await DurabilityChecks.snapshots(Self.environment(store, backend))
    }

    @Test(arguments: cases)
    func recovery(store: Store, backend: Backend) async throws {
        try await DurabilityChecks.recovery(Self.environment(store, backend))
    }

    @Test(arguments: cases)
    func effectEventsAreJournaledDensely(store: Store, backend: Backend) async throws {
        try await DurabilityChecks.effectEventsAreJournaledDensely(Self.environment(store, backend))
    }

    @Test(arguments: cases)
    func undecodableRecord(store: Store, backend: Backend) async throws {
        try await DurabilityChecks.undecodableRecord(Self.environment(store, backend))
    }

    @Test(arguments: cases)
    func snapshotAheadOfEvents(store: Store, backend: Backend) async throws {
        try await DurabilityChecks.snapshotAheadOfEvents(Self.environment(store, backend))
    }

    @Test(arguments: cases)
    func anotherFeaturesLoop(store: Store, backend: Backend) async throws {
        try await DurabilityChecks.anotherFeaturesLoop(Self.environment(store, backend))
    }

    @Test(arguments: cases)
    func aLoopWithoutAFeatureIsAdopted(store: Store, backend: Backend) async throws {
        try await DurabilityChecks.aLoopWithoutAFeatureIsAdopted(Self.environment(store, backend))
    }

    @Test(arguments: cases)
    func replayCheckOfAnotherFeaturesLoop(store: Store, backend: Backend) async throws {
        try await DurabilityChecks.replayCheckOfAnotherFeaturesLoop(Self.environment(store, backend))
    }

    @Test(arguments: cases)
    func newerSchemaVersion(store: Store, backend: Backend) async throws {
        try await DurabilityChecks.newerSchemaVersion(Self.environment(store, backend))
    }

    @Test(arguments: cases)
    func eventAfterStop(store: Store, backend: Backend) async throws {
        try await DurabilityChecks.eventAfterStop(Self.environment(store, backend))
    }

    @Test(arguments: cases)
    func deposedOwnerIsFenced(store: Store, backend: Backend) async throws {
        try await DurabilityChecks.deposedOwnerIsFenced(Self.environment(store, backend))
    }

    @Test(arguments: cases)
    func retention(store: Store, backend: Backend) async throws {
        try await DurabilityChecks.retention(Self.environment(store, backend))
    }

    @Test(arguments: cases)
    func deposedOwnerPrunesNothing(store: Store, backend: Backend) async throws {
        try await DurabilityChecks.deposedOwnerPrunesNothing(Self.environment(store, backend))
    }

    @Test(arguments: cases)
    func pruningIsBounded(store: Store, backend: Backend) async throws {
        try await DurabilityChecks.pruningIsBounded(Self.environment(store, backend))
    }

    @Test(arguments: cases)
    func archive(store: Store, backend: Backend) async throws {
        try await DurabilityChecks.archive(Self.environment(store, backend))
    }

    @Test(arguments: cases)
    func failedArchiveDeletesNothing(store: Store, backend: Backend) async throws {
        try await DurabilityChecks.failedArchiveDeletesNothing(Self.environment(store, backend))
    }

    @Test("Every check in DurabilityChecks.all has a test here")
    func everyCheckHasATest() {
        #expect(DurabilityChecks.all.count == 18)
    }
}
