import FeedbackLoop

#if canImport(Glibc)
import Glibc
#endif

/// Runs the chosen scenarios on the chosen backends and collects one report.
///
/// Each scenario measures its limit first and then every backend, in the same process and the same
/// minute, so that the ratios compare like with like even when the machine's speed drifts.
public struct BenchmarkRunner: Sendable {
    public var size: BenchmarkSize
    public var backends: [Backend]
    public var scenarios: [Scenario]
    /// Whether the peer (``CombineSystem`` on OpenCombine) runs too, as its own column.
    public var peer: Bool
    /// The malloc this process runs on, recorded in the report (the command line chooses it).
    public var allocator: String
    /// The most live loops the `scaling` scenario grows to.
    public var scalingLoops = ScalingScenario.defaultMaxLoops
    /// The `service` scenario's largest population of live loops (`nil`: its default for the size).
    public var serviceLoops: Int?
    /// The events journaled before the `durable` scenario's recovery runs (`nil`: its default).
    public var durableRecoveryEvents: Int?

    public init(
        size: BenchmarkSize, backends: [Backend] = Backend.allCases, scenarios: [Scenario] = Scenario.defaultCases,
        peer: Bool = false, allocator: String = "system"
    ) {
        self.allocator = allocator
        self.size = size
        self.backends = backends
        self.scenarios = scenarios
        self.peer = peer
    }

    /// Runs every scenario, or throws the first ``ScenarioFailure``.
    public func run(progress: Progress = { _ in }) async throws -> BenchmarkReport {
        var reports: [ScenarioReport] = []
        let loadBefore = Self.loadAverage()
        for scenario in scenarios {
            let start = Nanoseconds.now()
            reports.append(try await run(scenario, progress: progress))
            progress("\(scenario): done in \(String(format: "%.1f", Double(Nanoseconds.now() - start) / 1e9)) s")
        }
        return BenchmarkReport(
            date: Self.timestamp(),
            processors: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))),
            size: size,
            // The peer's column only where it runs: not in `scaling`, `composition`, `durable` nor `service`.
            backends: backends.map(\.rawValue) + (peer && scenarios.contains { !Self.withoutPeer.contains($0) } ? [PeerSystems.name] : []),
            scenarios: reports,
            allocator: allocator,
            loadAverage: [loadBefore, Self.loadAverage()].compactMap { $0 })
    }

    /// The scenarios the peer takes no part in: it has no composition of features, no durable
    /// journal, and as a synchronous design no wake-up for `scaling` and `service` to measure.
    public static let withoutPeer: Set<Scenario> = [.scaling, .composition, .durable, .service]

    /// The 1-minute load average, from getloadavg(3).
    static func loadAverage() -> Double? {
        var loads = [0.0, 0.0, 0.0]
        return getloadavg(&loads, 3) > 0 ? loads[0] : nil
    }

    public func run(_ scenario: Scenario, progress: Progress = { _ in }) async throws -> ScenarioReport {
        switch scenario {
        case .throughput: try await ThroughputScenario(size: size).run(backends: backends, peer: peer, progress: progress)
        case .pingpong: try await PingPongScenario(size: size).run(backends: backends, peer: peer, progress: progress)
        case .fanout: try await FanoutScenario(size: size).run(backends: backends, peer: peer, progress: progress)
        case .latency: try await LatencyScenario(size: size).run(backends: backends, peer: peer, progress: progress)
        case .cancellation: try await CancellationScenario(size: size).run(backends: backends, peer: peer, progress: progress)
        case .loops: try await LoopsScenario(size: size).run(backends: backends, peer: peer, progress: progress)
        case .composition: try await CompositionScenario(size: size).run(backends: backends, progress: progress)
        case .durable: try await DurableScenario(size: size, recoveryEvents: durableRecoveryEvents).run(backends: backends, progress: progress)
        case .service: try await ServiceScenario(size: size, maxLoops: serviceLoops).run(backends: backends, progress: progress)
        case .scaling: try await ScalingScenario(size: size, maxLoops: scalingLoops).run(backends: backends, progress: progress)
        }
    }

    static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02dZ",
            Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }
}
