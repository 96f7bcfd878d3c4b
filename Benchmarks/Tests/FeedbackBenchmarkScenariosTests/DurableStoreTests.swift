import FeedbackLoop
import FeedbackLoopDurable
import Foundation
import Synchronization
import Testing

@testable import FeedbackBenchmarkScenarios

/// The `durable` scenario on a store other than the built-in SQLite one, as the PostgreSQL
/// package's `feedback-bench-postgres` runs it.
@Suite(.serialized) struct DurableStoreTests {
    /// A store that hands out one journal for every measurement, as PostgreSQL's does (one
    /// database), and records what the scenario asked of its limit.
    final class OneJournalStore: DurableBenchmarkStore {
        let name = "one SQLite file"
        let limit = "counted bare appends"
        let shared: SQLiteJournal
        let directory: URL
        let limits = Mutex<[Int]>([])

        init() throws {
            directory = FileManager.default.temporaryDirectory.appending(path: "durable-store-tests-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            shared = try SQLiteJournal(path: directory.appending(path: "one.sqlite").path)
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        func journal() -> SQLiteJournal { shared }

        func bareAppends(events: Int, perTransaction: Int) async throws -> Double {
            let run = limits.withLock { limits in
                limits.append(perTransaction)
                return limits.count
            }
            return try await DurableScenario.bareAppends(shared, id: "bare-\(run)", events: events, perTransaction: perTransaction)
        }
    }

    /// Every measurement opens a loop id of its own: on a store that hands out one journal, a
    /// reused id would recover the earlier run's events and fail the counter's check.
    @Test(arguments: Backend.allCases)
    func aStoreWithOneJournalRunsEveryRow(backend: Backend) async throws {
        let store = try OneJournalStore()
        let report = try await DurableScenario(size: try BenchmarkSize(events: 1_000))
            .run(on: store, backends: [backend], progress: { _ in })
        #expect(report.failures.isEmpty)
        #expect(report.limit == "counted bare appends")
        #expect(report.summary == "durable loop on one SQLite file: group-commit sends vs in memory vs bare appends; recovery")
        #expect(report.rows.count == 6)
        for row in report.rows {
            let value = try #require(row.values[backend.rawValue], "\(row.label) has no \(backend) figure")
            #expect(value > 0, "\(row.label)")
        }
        #expect(report.rows.filter { $0.limit != nil }.count == 2)
        // One run of each limit to begin with, then one before and one after each of the row's
        // three runs: 1,024 events per transaction for `send`, 1 for `sendAndWait`.
        #expect(store.limits.withLock { $0 } == [1_024, 1] + Array(repeating: 1_024, count: 6) + Array(repeating: 1, count: 6))
    }

    /// The built-in store measures retention: recovery from the pruned journal (the counter's
    /// check passes, so every event is in the recovered state), the fills, and a pruned journal
    /// that takes less disk than the whole one; a store without retention has none of these rows.
    @Test func sqliteMeasuresRetention() async throws {
        let report = try await DurableScenario(size: try BenchmarkSize(events: 1_000), recoveryEvents: 20_000)
            .run(backends: [.callback], progress: { _ in })
        #expect(report.failures.isEmpty)
        func value(_ label: String) throws -> Double {
            let row = try #require(report.rows.first { $0.label == label }, "no row '\(label)' in \(report.rows.map(\.label))")
            return try #require(row.values["callback"] ?? row.limit)
        }
        let kept = "retention: keep 2 snapshots"
        #expect(try value("recover 20000 events, snapshot every 1000, \(kept)") > 0)
        #expect(try value("fill a journal: 20000 events, 4,096 per transaction, snapshot every 1000, \(kept)") > 0)
        let whole = try value("journal on disk after 20000 events, snapshot every 1000")
        let pruned = try value("journal on disk after 20000 events, snapshot every 1000, \(kept)")
        #expect(pruned < whole, "pruned \(pruned) MB, whole \(whole) MB")
    }

    /// The SQLite limit's transactions written on a thread of their own are the journal's: a
    /// journal opened on their file reads every event back, in order, and a loop resuming there
    /// appends the next event after the head they left.
    @Test func theSQLiteLimitsTransactionsAreTheJournals() async throws {
        let store = SQLiteBenchmarkStore()
        defer { store.remove() }
        #expect(try await store.transactionsOnAThread(events: 10, perTransaction: 4) > 0)
        let journal = try SQLiteJournal(path: store.directory.appending(path: "1.sqlite").path)
        let events = try await journal.events(loop: "bare", after: 0, limit: 100)
        #expect(events.map(\.sequence) == Array(1...10))
        #expect(events.allSatisfy { $0.payload == Array("1".utf8) && $0.schemaVersion == 1 })
        let epoch = try await journal.acquire(loop: "bare")
        try await journal.append(
            loop: "bare", epoch: epoch, events: [JournalRecord(sequence: 11, schemaVersion: 1, payload: Array("1".utf8))], snapshot: nil)
    }

    /// Two SQLite stores in one process (this suite's and ScenarioRunTests' durable runs, side by
    /// side) keep their files apart: one's removal leaves the other's journals working.
    @Test func sqliteStoresInOneProcessDoNotShareFiles() throws {
        let first = SQLiteBenchmarkStore()
        let second = SQLiteBenchmarkStore()
        #expect(first.directory != second.directory)
        _ = try first.journal()
        _ = try second.journal()
        first.remove()
        _ = try second.journal()
        second.remove()
    }

    /// The built-in store keeps feedback-bench's report as it was: the scenario's own heading.
    @Test func sqliteKeepsTheScenariosOwnHeading() async throws {
        let report = try await DurableScenario(size: try BenchmarkSize(events: 1_000))
            .run(backends: [.callback], progress: { _ in })
        #expect(report.summary == nil)
        #expect(report.limit == "the better of the SQLite journal's own appends and its transaction written on a thread of its own, no loop (1,024 or 1 events per transaction)")
        let table = try ReportFormat.table.render(
            BenchmarkReport(date: "d", processors: 2, size: try BenchmarkSize(events: 1_000), backends: ["callback"], scenarios: [report]))
        #expect(table.contains("### durable — durable loop on SQLite: group-commit sends vs in memory vs bare appends; recovery\n"))
    }

    /// Another store's heading names it, in the table; JSON keeps it for `--render`.
    @Test func anotherStoresHeadingNamesIt() throws {
        let report = ScenarioReport(scenario: .durable, limit: "bare INSERT", summary: "durable loop on PostgreSQL 15.14 at 127.0.0.1: …")
        let whole = BenchmarkReport(date: "d", processors: 2, size: try BenchmarkSize(events: 1_000), backends: [], scenarios: [report])
        #expect(try ReportFormat.table.render(whole).contains("### durable — durable loop on PostgreSQL 15.14 at 127.0.0.1: …\nlimit: bare INSERT\n"))
        let decoded = try JSONDecoder().decode(BenchmarkReport.self, from: Data(try ReportFormat.json.render(whole).utf8))
        #expect(decoded.scenarios[0].summary == report.summary)
        // Without one, the JSON is what it was before the field existed.
        #expect(!(try ReportFormat.json.render(
            BenchmarkReport(date: "d", processors: 2, size: try BenchmarkSize(events: 1_000), backends: [], scenarios: [ScenarioReport(scenario: .durable, limit: "x")]))
            .contains("summary")))
    }
}
