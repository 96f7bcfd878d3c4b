import FeedbackLoop

/// `pingpong`: a `skippingRepeated` feedback whose effect at once sends the next event, so every
/// cycle is reduce → query → start a `.send` effect → enqueue → reduce. Timed from the first
/// event until the loop is idle after the last cycle.
///
/// Limit: the bare reducer and query in a plain loop, with the same "skip repeated" comparison.
public struct PingPongScenario: Sendable {
    public let size: BenchmarkSize

    public init(size: BenchmarkSize) { self.size = size }

    public func run(backends: [Backend], peer: Bool = false, progress: Progress) async throws -> ScenarioReport {
        var report = ScenarioReport(scenario: .pingpong, limit: "bare reducer + query loop")
        let cycles = size.pingPongCycles
        let label = "\(cycles) cycles"
        progress("pingpong: limit")
        let limit = await best(of: size.repetitions) { await Self.bare(cycles: cycles) }
        report.recordLimit(label, "ns/cycle", .lower, value: limit)
        for backend in backends {
            try await report.measure(backend) { report in
                progress("pingpong: \(backend)")
                let nanoseconds = try await median(of: size.repetitions) {
                    try await Self.measure(backend, cycles: cycles)
                }
                report.record(label, "ns/cycle", .lower, backend: backend.rawValue, value: nanoseconds)
            }
        }
        if peer {
            try await report.measurePeer { report in
                progress("pingpong: \(PeerSystems.name)")
                let nanoseconds = try await median(of: size.repetitions) { try Self.measurePeer(cycles: cycles) }
                report.record(label, "ns/cycle", .lower, backend: PeerSystems.name, value: nanoseconds)
            }
        }
        return report
    }

    /// Nanoseconds per cycle, after checking that every cycle ran.
    public static func measure(_ backend: Backend, cycles: Int) async throws -> Double {
        let loop = Systems.pingPong(backend, cycles: cycles)
        let elapsed = await Nanoseconds.measure {
            loop.send(.start)
            await loop.waitUntilIdle()
        }
        try check(backend, cycles: cycles, state: loop.state, statistics: loop.statistics)
        await loop.stop()
        return Double(elapsed) / Double(cycles)
    }

    /// The peer's nanoseconds per cycle: the whole game plays inside the first `send`.
    public static func measurePeer(cycles: Int) throws -> Double {
        let loop = PeerSystems.pingPong(cycles: cycles)
        let elapsed = Nanoseconds.measure { loop.send(.start) }
        try PeerCheck(
            run: "pingpong, \(PeerSystems.name)", expectedState: cycles, finalState: loop.state.count, reduced: loop.reduced,
            expectedReduced: cycles + 1
        ).validate()
        loop.stop()
        return Double(elapsed) / Double(cycles)
    }

    /// The run's check: `cycles` events answered, each by one `.send` effect that finished.
    public static func check(
        _ backend: Backend, cycles: Int, state: Systems.PingPong, statistics: LoopStatistics
    ) throws(ScenarioFailure) {
        try RunCheck(
            run: "pingpong, \(backend)",
            expectedState: cycles,
            finalState: state.count,
            expectedReduced: cycles + 1,
            statistics: statistics,
            expectedStarted: cycles,
            expectedCancelled: 0
        ).validate()
    }

    static func bare(cycles: Int) async -> Double {
        let reduce = opaque(Systems.PingPong.reduce)
        let query = opaque(Systems.PingPong.query)
        let elapsed = await onDedicatedThread { () -> UInt64 in
            var state = Systems.PingPong(target: cycles)
            var last: Int?
            let elapsed = Nanoseconds.measure {
                reduce(&state, .start)
                while let next = query(state), next != last {
                    last = next
                    reduce(&state, .next)
                }
            }
            precondition(opaque(state).count == cycles)
            return elapsed
        }
        return Double(elapsed) / Double(cycles)
    }
}
