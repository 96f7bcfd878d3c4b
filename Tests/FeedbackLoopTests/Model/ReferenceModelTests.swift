import FeedbackLoop
import Foundation
import Testing

/// The reference model: random scripts played on every backend and compared, step by step, with
/// a pure interpreter of the loop's semantics (``ReferenceModel``). A failure prints its seed and
/// the shrunk script; `FEEDBACKLOOP_MODEL_SCRIPTS=N` plays N scripts per backend instead of the
/// default, and `FEEDBACKLOOP_MODEL_SEED=S` replays the script of seed S alone.
@Suite("The reference model")
struct ReferenceModelTests {
    static let scripts = ProcessInfo.processInfo.environment["FEEDBACKLOOP_MODEL_SCRIPTS"].flatMap(Int.init) ?? Scale.of(10_000)
    static let onlySeed = ProcessInfo.processInfo.environment["FEEDBACKLOOP_MODEL_SEED"].flatMap(UInt64.init)

    @Test(arguments: Backend.allCases)
    func deterministicScriptsMatchTheModelExactly(backend: Backend) async throws {
        let seeds: [UInt64] = Self.onlySeed.map { [$0] } ?? (0..<UInt64(Self.scripts)).map { $0 &* 0x9E37_79B9 &+ 1 }
        for seed in seeds {
            var rng = SplitMix64(seed: seed)
            let script = Script.random(using: &rng)
            let found = try await withDeadline("seed \(seed) on \(backend) (a step that never settles hangs here)", limit: .seconds(60)) {
                await DeterministicHarness.firstDifference(script, backend: backend)
            }
            guard let difference = found else { continue }
            if ProcessInfo.processInfo.environment["FEEDBACKLOOP_MODEL_NO_SHRINK"] != nil {
                Issue.record("\(backend): seed \(seed): \(difference)\n\(script)")
                return
            }
            let shrunk = await script.shrunk { await DeterministicHarness.firstDifference($0, backend: backend) != nil }
            let shrunkDifference = await DeterministicHarness.firstDifference(shrunk, backend: backend) ?? difference
            Issue.record(
                """
                \(backend): seed \(seed) differs from the model (replay: FEEDBACKLOOP_MODEL_SEED=\(seed)).
                \(shrunkDifference)
                shrunk script (\(shrunk.steps.count) of \(script.steps.count) steps):
                \(shrunk)
                """)
            return
        }
    }
}

extension ReferenceModelTests {
    static let concurrentRuns = ProcessInfo.processInfo.environment["FEEDBACKLOOP_MODEL_RUNS"].flatMap(Int.init) ?? Scale.of(100)

    @Test(arguments: Backend.allCases)
    func concurrentRunsKeepEveryGuaranteeTheModelChecks(backend: Backend) async throws {
        for seed in (0..<UInt64(Self.concurrentRuns)).map({ $0 &* 0x2545_F491 &+ 7 }) {
            var rng = SplitMix64(seed: seed)
            let run = ConcurrentRun.random(using: &rng)
            let violation = try await withDeadline("concurrent run \(seed) on \(backend)", limit: .seconds(180)) {
                await run.firstViolation(backend: backend)
            }
            if let violation {
                Issue.record("\(backend): concurrent run of seed \(seed): \(violation)")
                return
            }
        }
    }
}
