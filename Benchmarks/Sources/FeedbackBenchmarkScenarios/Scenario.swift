/// The benchmark scenarios, by the names used on the command line and in reports.
public enum Scenario: String, CaseIterable, Codable, Sendable, Hashable, CustomStringConvertible {
    /// External sends into a counter loop from 1 and from 4 senders.
    case throughput
    /// A `skippingRepeated` feedback whose effect at once sends the next event.
    case pingpong
    /// 1, 16 and 256 feedbacks evaluating their query on every state.
    case fanout
    /// Open-loop sends at 10, 50 and 90 % of the measured maximum rate, beside busy background
    /// loops; latency from the intended send time to the state being observed.
    case latency
    /// Switch-latest churn, set-based churn with many concurrent requests, and stop under load.
    case cancellation
    /// Many idle loops: memory and create/stop time per loop.
    case loops
    /// 1,000 keyed children in one parent, one changing per event, against the same children in a
    /// plain array reduced by the same loop (and, as information, one child's own loop).
    case composition
    /// A durable loop on the SQLite journal: sends with group commit against the same loop in
    /// memory and the journal's bare appends; recovery with and without snapshots.
    case durable
    /// Many live loops, each event finding its loop idle (a service's sessions): closed loop into
    /// 1,000 and `--loops` loops, open loop at fixed rates over 10,000; against a task parked per
    /// unit on a continuation.
    case service
    /// Throughput and p99 as live loops grow from 1 to `--loops` (idle and active) and senders
    /// from 1 to 8. Not in the default run: ask for it with `--scenario scaling`.
    case scaling

    /// What runs when no `--scenario` is named: every scenario but `scaling`, which keeps the
    /// default run near a minute.
    public static let defaultCases: [Scenario] = allCases.filter { $0 != .scaling }

    public var description: String { rawValue }

    /// One line on what the scenario measures, for the report.
    public var summary: String {
        switch self {
        case .throughput: "external sends into a counter loop"
        case .pingpong: "skippingRepeated feedback whose effect immediately sends the next event"
        case .fanout: "F feedbacks evaluating their query on each state"
        case .latency: "open-loop send -> state observed, from the intended send time, with background loops"
        case .cancellation: "switch-latest churn, set-based churn, stop under load"
        case .loops: "idle loops: memory and create+stop per loop"
        case .composition: "1,000 keyed children, one changing per event, vs the same children in a plain array"
        case .durable: "durable loop on SQLite: group-commit sends vs in memory vs bare appends; recovery"
        case .service: "live loops each receiving now and then, every event finding its loop idle: closed loop, open loop at fixed rates"
        case .scaling: "throughput and p99 as live loops (idle, active) and senders grow"
        }
    }
}
