import Benchmark
import FeedbackBenchmarkScenarios
import FeedbackLoop

/// The feedback-bench scenarios as package-benchmark benchmarks: wall clock, throughput and malloc
/// counts per iteration, each iteration a fixed amount of work so that counts per iteration divide
/// into counts per event. `check-allocations.sh` gates on the W1 allocation counts; nothing here
/// gates on time.
///
/// `latency` is left to feedback-bench: an open-loop run at a fixed rate does not fit the
/// iterate-and-measure model.
let benchmarks: @Sendable () -> Void = {
    /// Events (cycles, switches, loops) per iteration.
    let unitsPerIteration = 1_000

    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        warmupIterations: 3,
        maxDuration: .seconds(1),
        maxIterations: 2_000
    )

    for backend in Backend.allCases {
        // W1 in steady state: the loop exists and has drained before the first iteration, so the
        // count is what a send costs, not what a loop costs to create. The allocation gate reads
        // these two benchmarks. On `callback` each send reduces before it returns, so only the
        // sends are measured; on `actor` the reduction happens on the actor, so the measurement
        // runs until the loop is idle and includes `waitUntilIdle`'s own allocations (its
        // continuation), which makes the actor figure an upper bound.
        Benchmark(
            "W1 send \(backend)",
            closure: { (benchmark: Benchmark, loop: Loop<Int, Int>) async in
                if backend == .callback {
                    benchmark.startMeasurement()
                    for _ in 0..<unitsPerIteration { loop.send(1) }
                    benchmark.stopMeasurement()
                    await loop.waitUntilIdle()
                } else {
                    for _ in 0..<unitsPerIteration { loop.send(1) }
                    await loop.waitUntilIdle()
                }
            },
            setup: { () async -> Loop<Int, Int> in
                let loop = Systems.counter(backend)
                for _ in 0..<10_000 { loop.send(1) }
                await loop.waitUntilIdle()
                return loop
            }
        )

        Benchmark("throughput 4 senders \(backend)") { _ in
            blackHole(try await ThroughputScenario.measure(backend, events: 4 * unitsPerIteration, senders: 4))
        }

        Benchmark("W2 pingpong \(backend)") { _ in
            blackHole(try await PingPongScenario.measure(backend, cycles: unitsPerIteration))
        }

        for feedbacks in FanoutScenario.feedbackCounts {
            Benchmark("fanout F=\(feedbacks) \(backend)") { _ in
                blackHole(try await FanoutScenario.measure(backend, feedbacks: feedbacks, states: unitsPerIteration))
            }
        }

        Benchmark("W3 switch-latest churn \(backend)") { _ in
            blackHole(try await CancellationScenario.churn(backend, cycles: unitsPerIteration))
        }

        Benchmark("set churn 1000 requests \(backend)", configuration: .init(maxIterations: 50)) { _ in
            blackHole(try await CancellationScenario.setChurn(backend, concurrent: 1_000, events: 100))
        }

        Benchmark("stop 10000 in flight \(backend)", configuration: .init(maxIterations: 20)) { _ in
            blackHole(try await CancellationScenario.stopUnderLoad(backend, inFlight: 10_000))
        }

        Benchmark("loops create+stop \(backend)", configuration: .init(maxIterations: 200)) { _ in
            blackHole(try await LoopsScenario.measure(backend, count: unitsPerIteration))
        }
    }
}
