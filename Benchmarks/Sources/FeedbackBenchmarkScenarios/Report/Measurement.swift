import FeedbackLoop

/// One row of a scenario's table: a figure measured on every backend and, where one exists, on the
/// bare limit doing the same work in the same run.
public struct Measurement: Codable, Sendable, Hashable {
    /// Which way is better, which also says how the ratio to the limit is taken.
    public enum Better: String, Codable, Sendable, Hashable {
        /// Times and sizes: the ratio is `value / limit`.
        case lower
        /// Rates: the ratio is `limit / value`.
        case higher
        /// Counts that must match (started, cancelled, leaked): no ratio.
        case exact
    }

    /// What was measured, e.g. "1 sender" or "50 % of max".
    public var label: String
    /// The figure and its unit, e.g. "ns/event".
    public var metric: String
    public var better: Better
    /// The bare limit's figure, when there is one.
    public var limit: Double?
    /// Each backend's figure, keyed by `Backend` raw value.
    public var values: [String: Double]

    public init(label: String, metric: String, better: Better, limit: Double? = nil, values: [String: Double] = [:]) {
        self.label = label
        self.metric = metric
        self.better = better
        self.limit = limit
        self.values = values
    }

    /// How many times slower (or bigger) than the limit `backend` is: 1 means as good as the
    /// limit. `nil` without a limit or a value.
    public func ratio(_ backend: String) -> Double? {
        guard let limit, let value = values[backend], better != .exact else { return nil }
        switch better {
        case .lower: return limit > 0 ? value / limit : nil
        case .higher: return value > 0 ? limit / value : nil
        case .exact: return nil
        }
    }
}

/// One scenario's results: what the limit is and one row per figure.
public struct ScenarioReport: Codable, Sendable, Hashable {
    public var scenario: Scenario
    /// What the limit column measures, e.g. "bare reducer loop".
    public var limit: String
    public var rows: [Measurement]
    /// Runs whose check failed, as "backend: what went wrong". A failed backend reports no further
    /// figures in this scenario; the figures it reported before come from runs that passed.
    public var failures: [String]
    /// The heading's line on what was measured, where it differs from the scenario's own
    /// ``Scenario/summary``: the `durable` scenario on a store other than SQLite names its store.
    public var summary: String?

    public init(scenario: Scenario, limit: String, rows: [Measurement] = [], failures: [String] = [], summary: String? = nil) {
        self.scenario = scenario
        self.limit = limit
        self.rows = rows
        self.failures = failures
        self.summary = summary
    }

    /// A figure better than its row's limit.
    public struct BeatenLimit: Sendable, Hashable {
        public var label: String
        public var metric: String
        /// The backend's (or the peer's) column.
        public var column: String
        public var ratio: Double
    }

    /// Every figure better than its row's limit by more than ``beatenLimitMargin``. A limit is
    /// the floor of its work, the best version of it written by hand, so each of these says the
    /// limit is wrong and must be fixed, not that the backend is better than possible. Tails
    /// (percentiles above the median) and maxima are left out: on a shared machine they measure
    /// the neighbours' preemptions as much as the code, in the limit's run as in a backend's.
    public var beatenLimits: [BeatenLimit] {
        rows.flatMap { row -> [BeatenLimit] in
            guard !Self.isTail(row.metric) else { return [] }
            return row.values.keys.sorted().compactMap { column in
                guard let ratio = row.ratio(column), ratio < 1 - Self.beatenLimitMargin else { return nil }
                return BeatenLimit(label: row.label, metric: row.metric, column: column, ratio: ratio)
            }
        }
    }

    /// Whether `metric` is a maximum or a percentile above the median ("p90 µs", "p99 × parked task").
    static func isTail(_ metric: String) -> Bool {
        metric.hasPrefix("max") || (metric.hasPrefix("p") && metric.first(where: \.isNumber) != nil && !metric.hasPrefix("p50"))
    }

    /// How far below its limit a figure must be to count as beating it: two wall-clock figures
    /// within 1 % of each other are the same figure (a rate that both sustain, for one).
    public static let beatenLimitMargin = 0.01

    /// Runs `body` for `backend` unless the backend already failed in this scenario; a
    /// ``ScenarioFailure`` is recorded instead of ending the whole benchmark run, so one engine bug
    /// does not hide every other figure. Any other error ends the run.
    mutating func measure(_ backend: Backend, _ body: (inout ScenarioReport) async throws -> Void) async throws {
        try await measure(column: backend.rawValue, body)
    }

    /// ``measure(_:_:)`` for the peer's column.
    mutating func measurePeer(_ body: (inout ScenarioReport) async throws -> Void) async throws {
        try await measure(column: PeerSystems.name, body)
    }

    private mutating func measure(column: String, _ body: (inout ScenarioReport) async throws -> Void) async throws {
        guard !failures.contains(where: { $0.hasPrefix("\(column):") }) else { return }
        do {
            try await body(&self)
        } catch let failure as ScenarioFailure {
            failures.append("\(column): \(failure)")
        }
    }

    /// Sets `backend`'s value of the row (label, metric), adding the row if needed.
    mutating func record(
        _ label: String, _ metric: String, _ better: Measurement.Better,
        backend: String, value: Double
    ) {
        if let index = rows.firstIndex(where: { $0.label == label && $0.metric == metric }) {
            rows[index].values[backend] = value
        } else {
            rows.append(Measurement(label: label, metric: metric, better: better, values: [backend: value]))
        }
    }

    /// Sets the limit of the row (label, metric), adding the row if needed.
    mutating func recordLimit(_ label: String, _ metric: String, _ better: Measurement.Better, value: Double) {
        if let index = rows.firstIndex(where: { $0.label == label && $0.metric == metric }) {
            rows[index].limit = value
        } else {
            rows.append(Measurement(label: label, metric: metric, better: better, limit: value))
        }
    }
}

/// A whole run: where and how it ran, then one report per scenario.
public struct BenchmarkReport: Codable, Sendable, Hashable {
    public var date: String
    public var processors: Int
    public var size: BenchmarkSize
    public var backends: [String]
    public var scenarios: [ScenarioReport]
    /// The malloc the run used (`system` or `jemalloc`); absent in reports from before it was
    /// recorded.
    public var allocator: String?
    /// The machine's 1-minute load average when the run began and when it ended: on a shared
    /// machine, the context that says how much of a latency tail is other work.
    public var loadAverage: [Double]?

    /// Every failed run, scenario by scenario. A report with failures is not a benchmark result.
    public var failures: [String] {
        scenarios.flatMap { scenario in scenario.failures.map { "\(scenario.scenario): \($0)" } }
    }

    public init(
        date: String, processors: Int, size: BenchmarkSize, backends: [String], scenarios: [ScenarioReport],
        allocator: String? = nil, loadAverage: [Double]? = nil
    ) {
        self.date = date
        self.processors = processors
        self.size = size
        self.backends = backends
        self.scenarios = scenarios
        self.allocator = allocator
        self.loadAverage = loadAverage
    }
}
