import FeedbackLoop
import FeedbackLoopDurable
import FeedbackLoopDurableTesting
import Foundation
import Testing

/// The durability suite on the test kit's in-memory journal, on every backend: each test has its
/// own journal, which every "new handle" shares.
@Suite("Durability: in memory")
struct InMemoryDurabilityTests {
    static func environment(_ backend: Backend) -> DurabilityEnvironment {
        let journal = InMemoryJournal()
        return DurabilityEnvironment(
            backend: backend,
            makeJournal: { journal },
            depose: { loop in _ = try await journal.acquire(loop: loop) })
    }

    @Test(arguments: Backend.allCases)
    func persistBeforeAct(backend: Backend) async throws {
        try await DurabilityChecks.persistBeforeAct(Self.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func groupCommit(backend: Backend) async throws {
        try await DurabilityChecks.groupCommit(Self.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func snapshots(backend: Backend) async throws {
        try await DurabilityChecks.snapshots(Self.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func recovery(backend: Backend) async throws {
        try await DurabilityChecks.recovery(Self.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func effectEventsAreJournaledDensely(backend: Backend) async throws {
        try await DurabilityChecks.effectEventsAreJournaledDensely(Self.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func undecodableRecord(backend: Backend) async throws {
        try await DurabilityChecks.undecodableRecord(Self.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func newerSchemaVersion(backend: Backend) async throws {
        try await DurabilityChecks.newerSchemaVersion(Self.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func eventAfterStop(backend: Backend) async throws {
        try await DurabilityChecks.eventAfterStop(Self.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func deposedOwnerIsFenced(backend: Backend) async throws {
        try await DurabilityChecks.deposedOwnerIsFenced(Self.environment(backend))
    }

    @Test("Every check in DurabilityChecks.all has a test here")
    func everyCheckHasATest() {
        #expect(DurabilityChecks.all.count == 9)
    }
}
