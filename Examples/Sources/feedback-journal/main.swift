// The replay check for the example feature `Tally` at version 2: the few lines a team writes for
// its own feature (see the article "Evolving a durable feature" in FeedbackLoopDurableTesting).
//
//     swift run --package-path Examples feedback-journal Tests/FeedbackLoopDurableTests/Fixtures/tally-v1.sqlite
import FeedbackLoopDurableTesting
import Foundation

let check = JournalReplayCheck(initial: Tally.State(), reduce: Tally.reduce, schemaVersion: Tally.schemaVersion, feature: "tally")
exit(await check.command())
