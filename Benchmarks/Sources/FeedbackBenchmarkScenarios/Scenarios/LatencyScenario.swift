import FeedbackLoop

/// `latency`: open loop. One sender thread sends event `i` at its intended time
/// `start + i / rate`, at 10, 50 and 90 % of the maximum rate measured just before, and an
/// observer of the loop records how long after the intended time the state carrying `i` was
/// observed. Meanwhile background loops of the same backend carry load: each measured send is
/// followed by one send into the next background loop, round robin.
///
/// Limit: the best hand-written version of the same job, in the same harness at its own 10/50/90 %:
/// the state behind a lock, reduced on the sending thread and handed to the observer once the
/// lock is released, with the same background sends into as many bare counters behind their own
/// locks. A hand-off to another thread (an `AsyncStream` to a consumer task, the limit this
/// replaced) is slower than `callback`, which does exactly this, so it was no floor.
///
/// Each column, the limit's included, runs at fractions of its own maximum, so a row compares
/// the same share of each one's capacity, not the same offered rate: the limit's 90 % is a
/// higher rate than any backend's. At 90 % the tail percentiles measure how much slack the
/// phase really had (the maximum is one flat-out run just before), which is no property of the
/// work: they are not held against the limit (``ScenarioReport/beatenLimits``).
public struct LatencyScenario: Sendable {
    public static let fractions = [0.1, 0.5, 0.9]
    public static let percentiles: [(name: String, value: Double)] = [
        ("p50", 50), ("p90", 90), ("p99", 99), ("p99.9", 99.9),
    ]

    public let size: BenchmarkSize

    public init(size: BenchmarkSize) { self.size = size }

    public func run(backends: [Backend], peer: Bool = false, progress: Progress) async throws -> ScenarioReport {
        var report = ScenarioReport(
            scenario: .latency,
            limit: """
                bare reducer behind a lock, observed in place; same harness and background. Each column runs at 10/50/90 % \
                of its own maximum: × limit compares equal shares of each one's capacity, not equal rates
                """)
        progress("latency: limit, \(size.backgroundLoops) background counters")
        let counters = (0..<size.backgroundLoops).map { _ in Lock(0) }
        let add = opaque(Systems.add)
        let limitRows = try await measure(
            target: InPlaceTarget.self, background: counters.map { counter in { counter.withLock { add(&$0, 1) } } })
        let counted = counters.reduce(0) { total, counter in total + counter.withLock { $0 } }
        let sent = backgroundSends.withLock { $0 }
        guard counted == sent else {
            throw ScenarioFailure("latency, limit: background counters reduced \(counted) events, \(sent) were sent")
        }
        for (label, metric, better, value) in limitRows {
            report.recordLimit(label, metric, better, value: value)
        }
        for backend in backends {
            try await report.measure(backend) { report in
                progress("latency: \(backend), \(size.backgroundLoops) background loops")
                let background = (0..<size.backgroundLoops).map { _ in Systems.idleCounter(backend) }
                let rows = try await measure(
                    target: LoopTarget.self, backend: backend, background: background.map { loop in { loop.send(1) } })
                var total = 0
                for loop in background {
                    await loop.waitUntilIdle()
                    total += loop.state
                    await loop.stop()
                }
                let sent = backgroundSends.withLock { $0 }
                guard total == sent else {
                    throw ScenarioFailure("latency, \(backend): background loops reduced \(total) events, \(sent) were sent")
                }
                for (label, metric, better, value) in rows {
                    report.record(label, metric, better, backend: backend.rawValue, value: value)
                }
            }
        }
        if peer {
            try await report.measurePeer { report in
                progress("latency: \(PeerSystems.name), \(size.backgroundLoops) background loops")
                let background = (0..<size.backgroundLoops).map { _ in PeerSystems.idleCounter() }
                let rows = try await measure(target: PeerTarget.self, background: background.map { loop in { loop.send(1) } })
                let total = background.reduce(0) { $0 + $1.state }
                for loop in background { loop.stop() }
                let sent = backgroundSends.withLock { $0 }
                guard total == sent else {
                    throw ScenarioFailure("latency, \(PeerSystems.name): background loops reduced \(total) events, \(sent) were sent")
                }
                for (label, metric, better, value) in rows {
                    report.record(label, metric, better, backend: PeerSystems.name, value: value)
                }
            }
        }
        return report
    }

    private func phaseCount(rate: Double) -> Int {
        Swift.min(size.events, Swift.max(100, Int(rate * size.latencyPhaseSeconds)))
    }

    /// Sends into the current backend's background loops: one per measured send.
    private let backgroundSends = LockedCounter()

    private func measure<Target: OpenLoopTarget>(
        target: Target.Type, backend: Backend = .callback, background: [@Sendable () -> Void]
    ) async throws -> [(String, String, Measurement.Better, Double)] {
        if !background.isEmpty { backgroundSends.withLock { $0 = 0 } }
        let calibration = try await phase(Target.self, backend: backend, count: size.latencyCalibrationEvents, interval: 0, background: background)
        let maximum = calibration.rate
        var rows: [(String, String, Measurement.Better, Double)] = [("flat out", "Mevents/s", .higher, maximum / 1e6)]
        for fraction in Self.fractions {
            let rate = maximum * fraction
            let recorder = try await phase(
                Target.self, backend: backend, count: phaseCount(rate: rate), interval: 1e9 / rate, background: background)
            let label = "\(Int(fraction * 100)) % of max"
            for (name, percentile) in Self.percentiles {
                rows.append((label, "\(name) µs", .lower, recorder.histogram.microseconds(atPercentile: percentile)))
            }
            rows.append((label, "max µs", .lower, recorder.histogram.maxMicroseconds))
        }
        return rows
    }

    private func phase<Target: OpenLoopTarget>(
        _: Target.Type, backend: Backend, count: Int, interval: Double, background: [@Sendable () -> Void]
    ) async throws -> OpenLoopRecorder {
        let recorder = OpenLoopRecorder(expected: count, interval: interval)
        let target = await Target(backend: backend, recorder: recorder)
        let what = "latency, \(Target.name(backend)), \(count) events every \(Int(interval)) ns"
        await onDedicatedThreads(1) { _ in
            if background.isEmpty {
                for index in 0..<count {
                    Nanoseconds.spin(until: recorder.intended(index))
                    target.send(index)
                }
            } else {
                for index in 0..<count {
                    Nanoseconds.spin(until: recorder.intended(index))
                    target.send(index)
                    background[index % background.count]()
                }
            }
        }
        if !background.isEmpty { backgroundSends.withLock { $0 += count } }
        try await recorder.waitForAll(seconds: 60, what)
        try await target.finish(what: what, count: count)
        return recorder
    }
}

/// What the open-loop sender sends into.
protocol OpenLoopTarget: Sendable {
    static func name(_ backend: Backend) -> String
    init(backend: Backend, recorder: OpenLoopRecorder) async
    func send(_ index: Int)
    /// Checks the run and releases the target.
    func finish(what: String, count: Int) async throws
}

/// A loop whose state is the latest index, observed by the recorder.
struct LoopTarget: OpenLoopTarget {
    let loop: Loop<Int, Int>
    let observation: Observation

    static func name(_ backend: Backend) -> String { backend.rawValue }

    init(backend: Backend, recorder: OpenLoopRecorder) async {
        loop = Loop(initial: -1, reduce: Systems.latest, backend: backend)
        observation = loop.observe { state in
            if state >= 0 { recorder.receive(state) }
        }
        await loop.waitUntilIdle()
    }

    func send(_ index: Int) { loop.send(index) }

    func finish(what: String, count: Int) async throws {
        await loop.waitUntilIdle()
        try RunCheck(
            run: what, expectedState: count - 1, finalState: loop.state, expectedReduced: count,
            statistics: loop.statistics
        ).validate()
        observation.cancel()
        await loop.stop()
    }
}

/// The peer's system whose state is the latest index, observed by the recorder. It reduces on the
/// sending thread, so the figure is the whole pipeline run synchronously by `send`.
struct PeerTarget: OpenLoopTarget {
    let loop: CombineSystem.Loop<Int, Int>

    static func name(_ backend: Backend) -> String { PeerSystems.name }

    init(backend: Backend, recorder: OpenLoopRecorder) async {
        loop = CombineSystem.Loop(initial: -1, reduce: Systems.latest, onState: { state in
            if state >= 0 { recorder.receive(state) }
        })
    }

    func send(_ index: Int) { loop.send(index) }

    func finish(what: String, count: Int) async throws {
        try PeerCheck(run: what, expectedState: count - 1, finalState: loop.state, reduced: loop.reduced, expectedReduced: count)
            .validate()
        loop.stop()
    }
}

/// The limit: the latest index behind a lock, set on the sending thread, and the observer called
/// with it after the lock is released.
struct InPlaceTarget: OpenLoopTarget {
    let state = Lock(-1)
    let reduce = opaque(Systems.latest)
    let recorder: OpenLoopRecorder

    static func name(_ backend: Backend) -> String { "limit" }

    init(backend: Backend, recorder: OpenLoopRecorder) async {
        self.recorder = recorder
    }

    func send(_ index: Int) {
        let state = state.withLock { state in
            reduce(&state, index)
            return state
        }
        recorder.receive(state)
    }

    func finish(what: String, count: Int) async throws {
        let final = state.withLock { $0 }
        guard final == count - 1 else { throw ScenarioFailure("\(what): final state \(final), expected \(count - 1)") }
    }
}
