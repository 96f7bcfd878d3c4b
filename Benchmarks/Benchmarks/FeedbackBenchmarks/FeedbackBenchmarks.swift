import Benchmark
import FeedbackBenchmarkScenarios
import FeedbackLoop

/// The feedback-bench scenarios as package-benchmark benchmarks: wall clock, throughput and malloc
/// counts per iteration, each iteration a fixed amount of work so that counts per iteration divide
/// into counts per event.
///
/// The CI gate is package-benchmark's own static thresholds check (`swift package benchmark
/// thresholds check`): the p90 malloc count of each benchmark in `Thresholds/` against the file,
/// within the tolerance set here. Only the deterministic metric is gated, and only where it is
/// deterministic: on `callback` every allocation is the engine's own, except with 4 contending
/// senders, where the queue's growth depends on the scheduling; on `actor` the count follows how
/// often the scheduler wakes the drain, so only W1 (whose steady-state goal is ≤ 0.05 per event)
/// has a file. Nothing gates on time. `update-thresholds.sh` rewrites the files.
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
        maxIterations: 2_000,
        // 10 % of slack: W3, set churn and stop vary by a few allocations per thousand units with
        // the order in which tasks end. (A relative and an absolute tolerance would each fail the
        // check on their own, so there is only one.)
        thresholds: [.mallocCountTotal: .init(relative: [.p90: 10.0])]
    )
    /// W1's tolerances encode the goals of issue 4 around the stored p90: none at all on
    /// `callback` (0 allocations per send), and on `actor` 42 above the stored 8, so that the gate
    /// is the goal of ≤ 0.05 allocations per event (50 per 1,000 sends). Revisit the 42 when the
    /// stored figure changes.
    func w1Thresholds(_ backend: Backend) -> [BenchmarkMetric: BenchmarkThresholds] {
        [.mallocCountTotal: .init(absolute: [.p90: backend == .callback ? 0 : 42])]
    }

    for backend in Backend.allCases {
        // W1 in steady state: the loop exists and has drained before the first iteration, so the
        // count is what a send costs, not what a loop costs to create. The allocation gate reads
        // these two benchmarks. On `callback` each send reduces before it returns, so only the
        // sends are measured; on `actor` the reduction happens on the actor, so the measurement
        // runs until the loop is idle and includes `waitUntilIdle`'s own allocations (its
        // continuation), which makes the actor figure an upper bound.
        Benchmark(
            "W1 send \(backend)",
            configuration: .init(thresholds: w1Thresholds(backend)),
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
