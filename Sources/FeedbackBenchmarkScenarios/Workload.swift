import FeedbackLoop

/// The three workloads the peers were measured on, untimed, for instruction counting under
/// valgrind callgrind and for the package-benchmark suite: W1 external sends into a counter loop
/// (the `throughput` scenario with 1 sender), W2 ping-pong (`pingpong`), W3 switch-latest churn
/// (`cancellation`). Each checks its result like the scenarios do.
public enum Workload: String, CaseIterable, Codable, Sendable {
    case w1, w2, w3

    /// The scenario this workload reproduces.
    public var scenario: Scenario {
        switch self {
        case .w1: .throughput
        case .w2: .pingpong
        case .w3: .cancellation
        }
    }

    /// The workload for a scenario, if it has one.
    public init?(scenario: Scenario) {
        guard let workload = Self.allCases.first(where: { $0.scenario == scenario }) else { return nil }
        self = workload
    }

    /// Runs `units` sends / cycles / switches on `backend`, or on the bare limit when `backend` is
    /// `nil` (W1 and W2 only: W3's limit is a bare task churn). Creation and teardown are included;
    /// run two sizes and take the difference to get the cost per unit.
    public func run(_ backend: Backend?, units: Int) async throws {
        switch (self, backend) {
        case (.w1, let backend?):
            let loop = Systems.counter(backend)
            for _ in 0..<units { loop.send(1) }
            await loop.waitUntilIdle()
            try ThroughputScenario.check(backend, senders: 1, sent: units, loop: loop)
            await loop.stop()
        case (.w1, nil):
            _ = await ThroughputScenario.bare(events: units, senders: 1)
        case (.w2, let backend?):
            let loop = Systems.pingPong(backend, cycles: units)
            loop.send(.start)
            await loop.waitUntilIdle()
            try PingPongScenario.check(backend, cycles: units, state: loop.state, statistics: loop.statistics)
            await loop.stop()
        case (.w2, nil):
            _ = await PingPongScenario.bare(cycles: units)
        case (.w3, let backend?):
            let census = EffectCensus()
            let loop = Systems.churn(backend, census: census)
            for _ in 0..<units { loop.send(.next) }
            _ = try await loop.sendAndWait(.sync)
            await loop.stop()
            try RunCheck(
                run: "w3, \(backend)", expectedState: units, finalState: loop.state.generation,
                statistics: loop.statistics, expectedStarted: units + 1, expectedCancelled: units + 1,
                census: census.counts
            ).validate()
        case (.w3, nil):
            _ = try await CancellationScenario.bareChurn(cycles: units)
        }
    }
}
