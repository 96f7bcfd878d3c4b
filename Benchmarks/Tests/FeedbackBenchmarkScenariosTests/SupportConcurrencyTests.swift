import FeedbackLoop
import Testing

@testable import FeedbackBenchmarkScenarios

/// The benchmark support code that several threads share, driven from several threads at once, so
/// that the ThreadSanitizer run (`swift test --sanitize=thread -Xswiftc -DTSAN`) sees each shared
/// structure under contention (issue 17, item 10: its `Mutex`es and the effect census's stamps drew
/// six reports). The assertions check the counts; the sanitizer checks the synchronisation.
@Suite(.serialized) struct SupportConcurrencyTests {
    @Test func theLatencyHistogramCountsEveryRecordFromFourThreads() async {
        let histogram = LatencyHistogram()
        await onDedicatedThreads(4) { thread in
            for value in 0..<2_000 { histogram.record(UInt64(thread * 2_000 + value)) }
        }
        #expect(histogram.count == 8_000)
        #expect(histogram.maxMicroseconds >= 7.99)
    }

    @Test func theFourSenderLimitReducesBehindItsLock() async {
        let nanoseconds = await ThroughputScenario.bare(events: 20_000, senders: 4)
        #expect(nanoseconds > 0)
    }

    @Test func transitionStampsAreWrittenAndReadOnDifferentThreads() async {
        let stamps = TransitionStamps(count: 1_000)
        let seen = LockedCounter()
        await onDedicatedThreads(2) { thread in
            for generation in 0..<1_000 {
                if thread == 0 {
                    stamps[generation] = UInt64(generation + 1)
                } else if stamps[generation] != 0 {
                    seen.withLock { $0 += 1 }
                }
            }
        }
        #expect(stamps[999] == 1_000)
        #expect(stamps[1_000] == 0)
        #expect(stamps[-1] == 0)
    }

    @Test(arguments: Backend.allCases)
    func cancellationLatencyStampsAndRecordsAcrossTheLoopAndItsEffects(backend: Backend) async throws {
        let latency = try await CancellationScenario.cancellationLatency(backend, cycles: 200)
        #expect(latency.count == 200)
    }
}
