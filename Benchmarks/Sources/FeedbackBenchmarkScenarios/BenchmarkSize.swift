/// How much work each scenario does. The presets trade precision for time; `--events N` scales
/// every scenario from one number.
public struct BenchmarkSize: Codable, Sendable, Hashable {
    /// External sends per `throughput` run, and the base every other count derives from.
    public var events: Int
    /// Cycles per `pingpong` run.
    public var pingPongCycles: Int
    /// States per `fanout` run with one feedback (divided by F for F feedbacks).
    public var fanoutStates: Int
    /// Cycles of back-to-back switch-latest churn.
    public var churnCycles: Int
    /// Paced switch-latest cycles used to measure cancellation latency.
    public var cancellationLatencyCycles: Int
    /// Events of set-based churn, and how many requests run concurrently throughout.
    public var setChurnEvents: Int
    public var concurrentRequests: Int
    /// Effects in flight when `stop()` is called.
    public var inFlightAtStop: Int
    /// Idle loops created at once.
    public var idleLoops: Int
    /// Background loops carrying load during `latency`.
    public var backgroundLoops: Int
    /// Events sent flat out to find the maximum rate before the `latency` runs.
    public var latencyCalibrationEvents: Int
    /// Seconds each open-loop rate runs for (capped by `events`).
    public var latencyPhaseSeconds: Double
    /// Timed repetitions of the short scenarios; the median is reported.
    public var repetitions: Int

    /// The named presets of `--size`.
    public enum Preset: String, CaseIterable, Codable, Sendable {
        case small, medium, large
    }

    /// Every count derived from `events`, with the fixed populations the issue names (1,000
    /// background loops and concurrent requests, 10,000 effects at stop, 100,000 idle loops) from
    /// 100,000 events up, and proportionally fewer below, so that a tiny run stays tiny.
    ///
    /// Throws for a count that is not positive or above ``maximumEvents``.
    public init(events: Int) throws(ScenarioFailure) {
        guard events > 0 else { throw ScenarioFailure("the number of events must be positive, not \(events)") }
        guard events <= Self.maximumEvents else {
            throw ScenarioFailure(
                "\(events) events is more than the maximum of \(Self.maximumEvents) (about \(Self.estimatedMinutes(events: Self.maximumEvents)) minutes on 2 cores); --size large is 10000000")
        }
        // Above 100,000 events every population is at its full size; below, `full * events` stays
        // far from overflowing.
        func scaled(_ full: Int, minimum: Int) -> Int {
            events >= 100_000 ? full : Swift.max(minimum, full * events / 100_000)
        }
        self.events = events
        self.pingPongCycles = Swift.max(1, events / 5)
        self.fanoutStates = Swift.max(1, events / 2)
        self.churnCycles = Swift.max(1, events / 5)
        self.cancellationLatencyCycles = Swift.max(1, Swift.min(20_000, events / 10))
        self.setChurnEvents = Swift.max(1, events / 100)
        self.concurrentRequests = scaled(1_000, minimum: 2)
        self.inFlightAtStop = scaled(10_000, minimum: 2)
        self.idleLoops = scaled(100_000, minimum: 2)
        self.backgroundLoops = scaled(1_000, minimum: 1)
        self.latencyCalibrationEvents = Swift.max(1, Swift.min(200_000, events / 5))
        self.latencyPhaseSeconds = events >= 100_000 ? 0.5 : 0.05
        self.repetitions = events >= 100_000 ? 3 : 1
    }

    /// The largest `--events` accepted: ten times `--size large`, which already takes several
    /// minutes. Every count derived from it stays far from `Int`'s range, and a typo with three
    /// extra zeros is a clear error instead of a run that would last for days.
    public static let maximumEvents = 100_000_000

    /// A rough wall-time estimate for a default run (every scenario, every backend) of `events`,
    /// in whole minutes, from the medium run's ~1 minute per million events on 2 loaded cores.
    public static func estimatedMinutes(events: Int) -> Int {
        Swift.max(1, (events + 999_999) / 1_000_000)
    }

    /// The size that `--events N` or `--size NAME` asks for, `medium` when neither: the one
    /// reading of the two options for every benchmark command. Throws a message that names the
    /// option at fault.
    public init(events: Int?, size: String?) throws(ScenarioFailure) {
        switch (events, size) {
        case (_?, _?):
            throw ScenarioFailure("give either --events or --size, not both")
        case (let events?, nil):
            guard events > 0 else { throw ScenarioFailure("--events must be a positive number, not \(events)") }
            do {
                self = try BenchmarkSize(events: events)
            } catch {
                throw ScenarioFailure("--events: \(error)")
            }
        case (nil, let name?):
            guard let preset = Preset(rawValue: name) else {
                throw ScenarioFailure("unknown size '\(name)'; use small, medium or large")
            }
            self.init(preset: preset)
        case (nil, nil):
            self.init(preset: .medium)
        }
    }

    public init(preset: Preset) {
        switch preset {
        // The force-try is safe: the counts are positive literals.
        case .small: self = try! BenchmarkSize(events: 10_000)
        case .medium: self = try! BenchmarkSize(events: 1_000_000)
        case .large: self = try! BenchmarkSize(events: 10_000_000)
        }
        if preset == .large { latencyPhaseSeconds = 2 }
    }
}
