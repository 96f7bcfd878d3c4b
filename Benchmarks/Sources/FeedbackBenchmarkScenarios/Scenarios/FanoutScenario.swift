import FeedbackLoop

/// `fanout`: F = 1, 16 and 256 `skippingRepeated` feedbacks whose queries run on every state and
/// stay `nil`, so nothing starts: the cost of evaluating feedbacks, per state.
///
/// Limit: the bare reducer followed by the F query closures and their comparisons in a plain loop.
public struct FanoutScenario: Sendable {
    public static let feedbackCounts = [1, 16, 256]

    public let size: BenchmarkSize

    public init(size: BenchmarkSize) { self.size = size }

    public func run(backends: [Backend], peer: Bool = false, progress: Progress) async throws -> ScenarioReport {
        var report = ScenarioReport(scenario: .fanout, limit: "bare reducer + F queries loop")
        for feedbacks in Self.feedbackCounts {
            let states = Swift.max(1, size.fanoutStates / feedbacks)
            let label = "F = \(feedbacks)"
            progress("fanout: \(label), limit")
            let limit = await best(of: size.repetitions) { await Self.bare(feedbacks: feedbacks, states: states) }
            report.recordLimit(label, "ns/state", .lower, value: limit)
            for backend in backends {
                try await report.measure(backend) { report in
                    progress("fanout: \(label), \(backend)")
                    let nanoseconds = try await median(of: size.repetitions) {
                        try await Self.measure(backend, feedbacks: feedbacks, states: states)
                    }
                    report.record(label, "ns/state", .lower, backend: backend.rawValue, value: nanoseconds)
                }
            }
            if peer {
                try await report.measurePeer { report in
                    progress("fanout: \(label), \(PeerSystems.name)")
                    let nanoseconds = try await median(of: size.repetitions) {
                        try await Self.measurePeer(feedbacks: feedbacks, states: states)
                    }
                    report.record(label, "ns/state", .lower, backend: PeerSystems.name, value: nanoseconds)
                }
            }
        }
        return report
    }

    /// The peer's nanoseconds per state, sent from a dedicated thread like the backends'.
    public static func measurePeer(feedbacks: Int, states: Int) async throws -> Double {
        let loop = PeerSystems.fanout(feedbacks: feedbacks)
        let elapsed = await Nanoseconds.measure {
            await onDedicatedThreads(1) { _ in
                for _ in 0..<states { loop.send(1) }
            }
        }
        try PeerCheck(run: "fanout, F = \(feedbacks), \(PeerSystems.name)", expectedState: states, finalState: loop.state, reduced: loop.reduced)
            .validate()
        loop.stop()
        return Double(elapsed) / Double(states)
    }

    /// Nanoseconds per state, after checking every event was reduced and no effect started.
    public static func measure(_ backend: Backend, feedbacks: Int, states: Int) async throws -> Double {
        let loop = Systems.fanout(backend, feedbacks: feedbacks)
        await loop.waitUntilIdle()
        let elapsed = await Nanoseconds.measure {
            await onDedicatedThreads(1) { _ in
                for _ in 0..<states { loop.send(1) }
            }
            await loop.waitUntilIdle()
        }
        try RunCheck(
            run: "fanout, F = \(feedbacks), \(backend)",
            expectedState: states,
            finalState: loop.state,
            expectedReduced: states,
            statistics: loop.statistics,
            expectedStarted: 0
        ).validate()
        await loop.stop()
        return Double(elapsed) / Double(states)
    }

    static func bare(feedbacks: Int, states: Int) async -> Double {
        let reduce = opaque(Systems.add)
        let made = opaque((0..<feedbacks).map(Systems.fanoutQuery))
        let elapsed = await onDedicatedThread { () -> UInt64 in
            let queries = opaque(QueryLink.chain(made[...]))
            var state = 0
            let elapsed = Nanoseconds.measure {
                for _ in 0..<states {
                    reduce(&state, 1)
                    queries?.run(state)
                }
            }
            precondition(opaque(state) == states)
            return elapsed
        }
        return Double(elapsed) / Double(states)
    }
}

/// The limit's queries, one link each, as the engine holds a loop's feedbacks: a closure called out
/// of an array (or any buffer) is retained and released around its call, one in a `let` of an
/// object the caller holds is not, so links are what a hand-written version at the floor uses.
private final class QueryLink {
    let query: @Sendable (Int) -> Int?
    let next: QueryLink?
    /// Made and touched only by the dedicated thread that runs the limit, one access at a time.
    @exclusivity(unchecked) var last: Int?

    init(_ query: @escaping @Sendable (Int) -> Int?, next: QueryLink?) {
        self.query = query
        self.next = next
    }

    static func chain(_ queries: ArraySlice<@Sendable (Int) -> Int?>) -> QueryLink? {
        guard let first = queries.first else { return nil }
        return QueryLink(first, next: chain(queries.dropFirst()))
    }

    @inline(__always)
    func run(_ state: Int) {
        let next = query(state)
        if next != last { last = next }
        self.next?.runOutOfLine(state)
    }

    @inline(never)
    func runOutOfLine(_ state: Int) {
        run(state)
    }
}
