import FeedbackLoop

/// `latency`: open loop. One sender thread sends event `i` at its intended time
/// `start + i / rate`, at 10, 50 and 90 % of the maximum rate measured just before, and an
/// observer of the loop records how long after the intended time the state carrying `i` was
/// observed. Meanwhile background loops of the same backend carry load: each measured send is
/// followed by one send into the next background loop, round robin.
///
/// Limit: the same open-loop harness around a bare `AsyncStream<Int>` hand-off to a consumer task,
/// at its own 10/50/90 % (no background loops).
public struct LatencyScenario: Sendable {
    public static let fractions = [0.1, 0.5, 0.9]
    public static let percentiles: [(name: String, value: Double)] = [
        ("p50", 50), ("p90", 90), ("p99", 99), ("p99.9", 99.9),
    ]

    public let size: BenchmarkSize

    public init(size: BenchmarkSize) { self.size = size }

    public func run(backends: [Backend], peer: Bool = false, progress: Progress) async throws -> ScenarioReport {
        var report = ScenarioReport(scenario: .latency, limit: "AsyncStream hand-off, same harness")
        progress("latency: limit")
        for (label, metric, better, value) in try await measure(target: StreamTarget.self, background: []) {
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

/// The limit: a bare `AsyncStream` hand-off to one consumer task.
struct StreamTarget: OpenLoopTarget {
    let continuation: AsyncStream<Int>.Continuation
    let consumer: Task<Void, Never>

    static func name(_ backend: Backend) -> String { "AsyncStream" }

    init(backend: Backend, recorder: OpenLoopRecorder) async {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        self.continuation = continuation
        consumer = Task {
            for await index in stream { recorder.receive(index) }
        }
    }

    func send(_ index: Int) { continuation.yield(index) }

    func finish(what: String, count: Int) async throws {
        continuation.finish()
        await consumer.value
    }
}
