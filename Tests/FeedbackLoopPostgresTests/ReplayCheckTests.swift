#if Postgres
import FeedbackLoop
import FeedbackLoopDurable
import FeedbackLoopDurableTesting
import FeedbackLoopPostgres
import Foundation
import Testing

/// The replay check reads a PostgreSQL journal: its loops and their snapshots.
@Suite("Replay check: PostgreSQL", .enabled(if: Server.url != nil, Server.skipReason))
struct ReplayCheckTests {
    @Test func aJournalReplaysCleanlyAndADivergenceIsFound() async throws {
        let id = "replay-\(UInt64.random(in: 0...UInt64.max))"
        let loop = try await DurableLoop(
            id: id, journal: Server.journal(), initial: Ledger.State(), reduce: Ledger.reduce,
            configuration: DurableConfiguration(snapshotEvery: 2))
        for amount in 1...3 { try await loop.sendAndWait(.add(amount)) }
        await loop.stop()

        let journal = Server.journal()
        #expect(try await journal.loopIDs().contains(id))
        let clean = try await JournalReplayCheck(initial: Ledger.State(), reduce: Ledger.reduce).report(journal: journal, loops: [id])
        #expect(clean.passed, "\(clean)")
        #expect(clean.loops.first?.events == 3 && clean.loops.first?.snapshots == 1)

        let doubling = JournalReplayCheck(initial: Ledger.State(), reduce: { (state: inout Ledger.State, event: Ledger.Event) in
            Ledger.reduce(&state, event)
            if case .add(let amount) = event { state.total += amount }
        })
        let report = try await doubling.report(journal: journal, loops: [id])
        #expect(report.loops.first?.firstDivergence?.sequence == 2, "\(report)")
    }
}
#endif
