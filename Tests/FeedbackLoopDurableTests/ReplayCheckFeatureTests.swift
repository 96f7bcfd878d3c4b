import FeedbackLoop
import FeedbackLoopDurable
import FeedbackLoopDurableTesting
import Foundation
import Testing

/// The replay check of a journal that two features share: each feature's check reads its own
/// loops and skips the other's; a check that finds none of its own fails.
@Suite("Replay check: a journal of two features")
struct ReplayCheckFeatureTests {
    /// A SQLite journal with the Ledger loop "books" and the Tally loop "counts".
    static func sharedJournal() async throws -> String {
        let path = TemporaryFiles.path("two-features")
        let journal = try SQLiteJournal(path: path)
        let books = try await DurableLoop(id: "books", journal: journal, initial: Ledger.State(), reduce: Ledger.reduce)
        try await books.sendAndWait(.add(3))
        await books.stop()
        let counts = try await DurableLoop(
            id: "counts", journal: journal, initial: Tally.State(), reduce: Tally.reduce,
            configuration: DurableConfiguration(schemaVersion: Tally.schemaVersion))
        try await counts.sendAndWait(.add(4))
        await counts.stop()
        return path
    }

    @Test func eachFeaturesCheckReadsItsOwnLoopsAndSkipsTheOthers() async throws {
        let journal = try SQLiteJournal(path: try await Self.sharedJournal())
        let report = try await JournalReplayCheck(initial: Ledger.State(), reduce: Ledger.reduce).report(journal: journal)
        #expect(report.passed, "\(report)")
        #expect(report.loops.map(\.id) == ["books", "counts"])
        #expect(report.loops.map(\.events) == [1, 0])
        #expect(report.loops[1].journaledBy == DurableConfiguration.defaultFeature(state: Tally.State.self, event: Tally.Event.self))
        #expect(report.description.contains("skipped counts (journaled by the feature '"), "\(report)")
        #expect(report.description.contains("1 loops replay cleanly"), "\(report)")
    }

    /// After a rename of the feature (or with the wrong name), every loop is another feature's:
    /// the check fails rather than pass having read nothing.
    @Test func aCheckThatFindsNoLoopOfItsFeatureFails() async throws {
        let journal = try SQLiteJournal(path: try await Self.sharedJournal())
        let report = try await JournalReplayCheck(initial: Ledger.State(), reduce: Ledger.reduce, feature: "books")
            .report(journal: journal)
        #expect(!report.passed)
        #expect(report.foundNoLoopOfItsFeature)
        #expect(report.description.contains("no loop of the journal was journaled by the feature 'books'"), "\(report)")
    }

    @Test func theCommandExitsNonZeroForANamedLoopOfAnotherFeature() async throws {
        let path = try await Self.sharedJournal()
        let check = JournalReplayCheck(initial: Ledger.State(), reduce: Ledger.reduce)
        #expect(await check.command(arguments: ["check", path]) == 0)
        #expect(await check.command(arguments: ["check", path, "books"]) == 0)
        #expect(await check.command(arguments: ["check", path, "counts"]) == 1)
        let renamed = JournalReplayCheck(initial: Ledger.State(), reduce: Ledger.reduce, feature: "books")
        #expect(await renamed.command(arguments: ["check", path]) == 1)
    }
}
