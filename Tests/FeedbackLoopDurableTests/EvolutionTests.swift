import FeedbackLoop
import FeedbackLoopDurable
import FeedbackLoopDurableTesting
import Foundation
import GRDB
import Testing

/// Version 1 of the example feature `Tally`, as it shipped: the code that wrote
/// `Fixtures/tally-v1.sqlite`. Version 2 is `FeedbackLoopDurableTesting.Tally`.
enum TallyV1 {
    struct State: Codable, Sendable, Equatable {
        var total = 0
        var title = ""
    }

    enum Event: Codable, Sendable, Equatable {
        case add(Int)
        case rename(title: String)
    }

    @Sendable
    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .add(let amount): state.total += amount
        case .rename(let title): state.title = title
        }
    }

    /// What the fixture holds, loop by loop.
    static let history: [(loop: String, events: [Event])] = [
        ("tally-1", [.add(5), .rename(title: "Groceries"), .add(7), .add(-2), .rename(title: "Food")]),
        ("tally-2", [.add(1)]),
    ]
}

@Suite("Evolving a durable feature: version 1 journals read by version 2")
struct EvolutionTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "Fixtures")

    /// A writable copy of a checked-in journal: recovering takes ownership, which writes.
    static func copyOfFixture(_ name: String) throws -> String {
        guard let url = Bundle.module.url(forResource: "Fixtures/\(name)", withExtension: nil) else {
            throw DurabilityCheckFailure("fixture \(name) is missing from the test bundle")
        }
        let copy = URL(filePath: TemporaryFiles.path("fixture", suffix: "-\(name)"))
        try FileManager.default.copyItem(at: url, to: copy)
        return copy.path
    }

    /// Writes `Fixtures/tally-v1.sqlite` with version 1 of the feature. Run once, by hand:
    /// `FEEDBACKLOOP_WRITE_FIXTURES=1 swift test --enable-all-traits --filter EvolutionTests/writeVersion1Fixture`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["FEEDBACKLOOP_WRITE_FIXTURES"] != nil))
    func writeVersion1Fixture() async throws {
        let path = Self.fixtures.appending(path: "tally-v1.sqlite").path
        try? FileManager.default.removeItem(atPath: path)
        do {
            let journal = try SQLiteJournal(path: path)
            for (id, events) in TallyV1.history {
                let loop = try await DurableLoop(
                    id: id, journal: journal, initial: TallyV1.State(), reduce: TallyV1.reduce,
                    configuration: DurableConfiguration(feature: "tally", snapshotEvery: 3, schemaVersion: 1))
                for event in events { try await loop.sendAndWait(event) }
                await loop.stop()
            }
        }
        // One self-contained file, with no WAL beside it, once the journal's pool is closed.
        let database = try DatabaseQueue(path: path)
        try await database.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            try db.execute(sql: "PRAGMA journal_mode = DELETE")
        }
        try database.close()
    }

    @Test(arguments: Backend.allCases)
    func version2RecoversTheJournalsVersion1Wrote(backend: Backend) async throws {
        let path = try Self.copyOfFixture("tally-v1.sqlite")
        // The fixture predates recorded feature names: the first open records this one.
        let configuration = DurableConfiguration(feature: "tally", snapshotEvery: 3, schemaVersion: Tally.schemaVersion)
        let open = {
            try await DurableLoop(
                id: "tally-1", journal: try SQLiteJournal(path: path), initial: Tally.State(), reduce: Tally.reduce,
                backend: backend, configuration: configuration)
        }
        let loop = try await open()
        #expect(loop.state == Tally.State(total: 10, name: "Food", resets: 0))
        #expect(loop.recoveredSequence == 5)
        // Version 2's own events join the version 1 history, and both recover together.
        let afterReset = try await loop.sendAndWait(.reset)
        #expect(afterReset == Tally.State(total: 0, name: "Food", resets: 1))
        try await loop.sendAndWait(.add(4))
        await loop.stop()
        let recovered = try await open()
        #expect(recovered.state == Tally.State(total: 4, name: "Food", resets: 1))
        await recovered.stop()
        // Adopted: another feature is refused the loop.
        await #expect {
            let ledger = try await DurableLoop(
                id: "tally-1", journal: try SQLiteJournal(path: path), initial: Ledger.State(), reduce: Ledger.reduce,
                backend: backend, configuration: DurableConfiguration(feature: "ledger"))
            await ledger.stop()
        } throws: { error in
            guard case DurableLoopError.featureMismatch("tally-1", "tally", "ledger") = error else { return false }
            return true
        }
    }

    @Test func theReplayCheckPassesTheFixtureWithVersion2() async throws {
        let journal = try SQLiteJournal(path: try Self.copyOfFixture("tally-v1.sqlite"))
        let check = JournalReplayCheck(initial: Tally.State(), reduce: Tally.reduce, schemaVersion: Tally.schemaVersion)
        let report = try await check.report(journal: journal)
        #expect(report.passed, "\(report)")
        #expect(report.loops.map(\.id) == ["tally-1", "tally-2"])
        #expect(report.loops.map(\.events) == [5, 1])
        #expect(report.loops.map(\.snapshots) == [1, 0])
    }

    @Test func aChangedReducerIsADivergenceWithADiff() async throws {
        let journal = try SQLiteJournal(path: try Self.copyOfFixture("tally-v1.sqlite"))
        let doubling = JournalReplayCheck(
            initial: Tally.State(),
            reduce: { (state: inout Tally.State, event: Tally.Event) in
                if case .add(let amount) = event { state.total += 2 * amount } else { Tally.reduce(&state, event) }
            },
            schemaVersion: Tally.schemaVersion)
        let report = try await doubling.report(journal: journal, loops: ["tally-1"])
        #expect(!report.passed)
        guard case .divergence(let sequence, let difference)? = report.loops.first?.firstDivergence else {
            Issue.record("no divergence: \(report)")
            return
        }
        #expect(sequence == 3)
        #expect(difference.contains("total: 12") && difference.contains("total: 24"), "\(difference)")
        #expect(report.description.contains("FAILED  tally-1") && report.description.contains("record 3"), "\(report)")
    }

    /// Version 2's event type without its version 1 decoding: the first undecodable record is
    /// reported, and the replay resumes from the next snapshot.
    enum EventWithoutMigration: Codable {
        case add(Int)
        case rename(name: String)
        case reset
    }

    @Test func anEventThatNoLongerDecodesIsReportedWithItsSequence() async throws {
        let journal = try SQLiteJournal(path: try Self.copyOfFixture("tally-v1.sqlite"))
        let check = JournalReplayCheck(
            initial: Tally.State(),
            reduce: { (state: inout Tally.State, event: EventWithoutMigration) in
                if case .add(let amount) = event { state.total += amount }
            },
            schemaVersion: Tally.schemaVersion)
        let report = try await check.report(journal: journal, loops: ["tally-1"])
        guard case .undecodableEvent(let sequence, _)? = report.loops.first?.firstUnreadable else {
            Issue.record("no undecodable event: \(report)")
            return
        }
        #expect(sequence == 2)
        #expect(report.loops.first?.firstDivergence == nil)
        #expect(report.loops.first?.snapshots == 1)
    }

    @Test func theCommandExitsNonZeroOnAFinding() async throws {
        let path = try Self.copyOfFixture("tally-v1.sqlite")
        let good = JournalReplayCheck(initial: Tally.State(), reduce: Tally.reduce, schemaVersion: Tally.schemaVersion)
        #expect(await good.command(arguments: ["check", path]) == 0)
        let tooOld = JournalReplayCheck(initial: Tally.State(), reduce: Tally.reduce, schemaVersion: 0)
        #expect(await tooOld.command(arguments: ["check", path, "tally-2"]) == 1)
        #expect(await good.command(arguments: ["check"]) == 64)
        #expect(await good.command(arguments: ["check", path + ".missing"]) == 74)
    }

    @Test func aSnapshotNewerThanTheEventsIsReported() async throws {
        let journal = InMemoryJournal()
        let epoch = try await journal.acquire(loop: "short")
        let add = { (amount: Int, sequence: UInt64) in
            JournalRecord(sequence: sequence, schemaVersion: 2, payload: Array(#"{"add":{"_0":\#(amount)}}"#.utf8))
        }
        let snapshot = JournalRecord(sequence: 5, schemaVersion: 2, payload: Array(#"{"total":3,"name":"","resets":0}"#.utf8))
        try await journal.append(loop: "short", epoch: epoch, events: [add(1, 1), add(2, 2)], snapshot: snapshot)
        let check = JournalReplayCheck(initial: Tally.State(), reduce: Tally.reduce, schemaVersion: 2)
        let report = try await check.report(journal: journal)
        #expect(report.loops.first?.firstUnreadable == .snapshotAhead(sequence: 5, lastEvent: 2))
    }
}
