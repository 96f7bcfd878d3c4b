import FeedbackLoop
import Synchronization

/// `scaling` (not in the default run; `--scenario scaling`): how a backend's costs grow with the
/// number of live loops and of sending threads, each point compared with the same backend at 1.
///
/// - idle: N loops alive (one feedback each), all but one idle. Throughput of sends into the one,
///   and the p99 of `sendAndWait` on it (send → reduced → acknowledged).
/// - active: N loops alive and all receiving: the sends go round robin over every loop; the p99
///   is taken from `sendAndWait` calls round robin, each after sends into the next 16 loops.
/// - senders: 1 to 8 threads sending into one loop; throughput and the p99 of one `send` call
///   (sampled), which on `callback` includes reducing and on `actor` only enqueueing.
/// - observers: N observers join one loop, then leave oldest first; ns per observer, joining and
///   leaving together. Linear cost shows as a flat line; a linear scan per removal as a line that
///   grows tenfold from point to point.
///
/// N runs over the powers of ten up to `maxLoops` (`--loops`, default 100,000; 1,000,000 takes a
/// few GB on `actor`); the observer points are a hundredth, a tenth and all of the run's
/// `--events`, at most 1,000,000 (the default size's). No limit column: the curve's reference is
/// its own first point.
public struct ScalingScenario: Sendable {
    public static let senderCounts = [1, 2, 4, 8]
    public static let defaultMaxLoops = 100_000
    /// A million loops is the issue's top point; above it the run is a memory test, not a curve.
    public static let maximumLoops = 1_000_000
    /// The observer points' top: the issue's million, reached at the default size.
    public static let maximumObservers = 1_000_000

    public let size: BenchmarkSize
    public let maxLoops: Int

    public init(size: BenchmarkSize, maxLoops: Int = defaultMaxLoops) {
        self.size = size
        self.maxLoops = maxLoops
    }

    /// 1, 10, 100, … up to `maxLoops`, and `maxLoops` itself if it is not a power of ten.
    public var loopCounts: [Int] {
        var counts: [Int] = []
        var count = 1
        while count <= maxLoops {
            counts.append(count)
            count *= 10
        }
        if counts.last != maxLoops { counts.append(maxLoops) }
        return counts
    }

    /// A hundredth, a tenth and all of the run's events, at most ``maximumObservers``: 10,000,
    /// 100,000 and 1,000,000 at the default size, and proportionally fewer in a small run.
    public var observerCounts: [Int] {
        let most = Swift.min(Self.maximumObservers, size.events)
        var counts: [Int] = []
        for count in [most / 100, most / 10, most] where count > 0 && counts.last != count {
            counts.append(count)
        }
        return counts
    }

    /// Events per point, and `sendAndWait` samples for the p99.
    var events: Int { Swift.max(1_000, Swift.min(50_000, size.events / 20)) }
    var samples: Int { Swift.max(200, Swift.min(5_000, size.events / 200)) }

    public func run(backends: [Backend], progress: Progress) async throws -> ScenarioReport {
        var report = ScenarioReport(scenario: .scaling, limit: "none: compare each point with the same backend at 1")
        for backend in backends {
            try await report.measure(backend) { report in
                let name = backend.rawValue
                for count in loopCounts {
                    progress("scaling: \(count) loops, \(backend)")
                    let point = try await Self.loops(backend, count: count, events: events, samples: samples)
                    report.record("idle, \(count) \(count == 1 ? "loop" : "loops")", "ns/event", .lower, backend: name, value: point.idle.nanosecondsPerEvent)
                    report.record("idle, \(count) \(count == 1 ? "loop" : "loops")", "p99 µs", .lower, backend: name, value: point.idle.p99Microseconds)
                    report.record("active, \(count) \(count == 1 ? "loop" : "loops")", "ns/event", .lower, backend: name, value: point.active.nanosecondsPerEvent)
                    report.record("active, \(count) \(count == 1 ? "loop" : "loops")", "p99 µs", .lower, backend: name, value: point.active.p99Microseconds)
                }
                for senders in Self.senderCounts {
                    progress("scaling: \(senders) senders, \(backend)")
                    let point = try await Self.senders(backend, senders: senders, events: events)
                    let label = senders == 1 ? "1 sender" : "\(senders) senders"
                    report.record(label, "ns/event", .lower, backend: name, value: point.nanosecondsPerEvent)
                    report.record(label, "p99 µs", .lower, backend: name, value: point.p99Microseconds)
                }
                for count in observerCounts {
                    progress("scaling: \(count) observers, \(backend)")
                    let nanoseconds = try await Self.observers(backend, count: count)
                    report.record(
                        "observers, \(count) added and removed", "ns/observer", .lower, backend: name,
                        value: Double(nanoseconds) / Double(count))
                }
            }
        }
        return report
    }

    public struct Point: Sendable {
        public var nanosecondsPerEvent: Double
        public var p99Microseconds: Double
    }

    /// The idle and the active point for `count` live loops.
    static func loops(_ backend: Backend, count: Int, events: Int, samples: Int) async throws -> (idle: Point, active: Point) {
        let loops = (0..<count).map { _ in Systems.idleCounter(backend) }
        for loop in loops { await loop.waitUntilIdle() }
        var expected = [Int](repeating: 0, count: count)

        // Idle: everything into loop 0.
        let target = loops[0]
        let idleElapsed = await Nanoseconds.measure {
            await onDedicatedThreads(1) { _ in
                for _ in 0..<events { target.send(1) }
            }
            await target.waitUntilIdle()
        }
        expected[0] += events
        let idleLatency = LatencyHistogram()
        for _ in 0..<samples {
            let start = Nanoseconds.now()
            _ = try await target.sendAndWait(1)
            idleLatency.record(Nanoseconds.now() - start)
        }
        expected[0] += samples

        // Active: round robin over every loop.
        let activeElapsed = await Nanoseconds.measure {
            await onDedicatedThreads(1) { _ in
                for index in 0..<events { loops[index % count].send(1) }
            }
            for loop in loops { await loop.waitUntilIdle() }
        }
        for index in 0..<events { expected[index % count] += 1 }
        // Before each sample, one event into each of the next 16 loops (round robin), so that the
        // sample's `sendAndWait` competes with loops that have work, without building a backlog.
        let activeLatency = LatencyHistogram()
        var cursor = 0
        for sample in 0..<samples {
            for _ in 0..<Swift.min(16, count) {
                loops[cursor % count].send(1)
                expected[cursor % count] += 1
                cursor += 1
            }
            let start = Nanoseconds.now()
            _ = try await loops[sample % count].sendAndWait(1)
            activeLatency.record(Nanoseconds.now() - start)
            expected[sample % count] += 1
        }

        for (index, loop) in loops.enumerated() {
            await loop.waitUntilIdle()
            try RunCheck(
                run: "scaling, \(count) loops, \(backend), loop \(index)", expectedState: expected[index],
                finalState: loop.state, expectedReduced: expected[index], statistics: loop.statistics
            ).validate()
        }
        for loop in loops { await loop.stop() }
        return (
            Point(nanosecondsPerEvent: Double(idleElapsed) / Double(events), p99Microseconds: idleLatency.microseconds(atPercentile: 99)),
            Point(nanosecondsPerEvent: Double(activeElapsed) / Double(events), p99Microseconds: activeLatency.microseconds(atPercentile: 99))
        )
    }

    /// `senders` threads sending `events` in all into one loop; every 16th `send` call is timed.
    static func senders(_ backend: Backend, senders: Int, events: Int) async throws -> Point {
        let loop = Systems.counter(backend)
        let shares = ThroughputScenario.split(events, into: senders)
        let latency = LatencyHistogram()
        let elapsed = await Nanoseconds.measure {
            await onDedicatedThreads(senders) { sender in
                for index in 0..<shares[sender] {
                    if index % 16 == 0 {
                        let start = Nanoseconds.now()
                        loop.send(1)
                        latency.record(Nanoseconds.now() - start)
                    } else {
                        loop.send(1)
                    }
                }
            }
            await loop.waitUntilIdle()
        }
        try ThroughputScenario.check(backend, senders: senders, sent: events, loop: loop)
        await loop.stop()
        return Point(nanosecondsPerEvent: Double(elapsed) / Double(events), p99Microseconds: latency.microseconds(atPercentile: 99))
    }

    /// Nanoseconds for `count` observers to join one loop (each through `observe`, from one
    /// thread, until the loop has handled every join) and then leave oldest first (each
    /// `Observation` cancelled, until every leave is handled). Oldest first is the order a removal
    /// that scans from either end pays most for. Checked: each observer got the state current
    /// when it joined and one later state, and none got a state after it left.
    static func observers(_ backend: Backend, count: Int) async throws -> UInt64 {
        let loop = Systems.counter(backend)
        let calls = ObserverCalls()
        let observer: @Sendable (Int) -> Void = { _ in calls.count.add(1, ordering: .relaxed) }
        let start = Nanoseconds.now()
        let observations = await onDedicatedThread { (0..<count).map { _ in loop.observe(observer) } }
        await loop.waitUntilIdle()
        let joined = Nanoseconds.now() &- start
        try calls.expect(count, "\(count) observers joining \(backend) got the current state")

        loop.send(1)
        await loop.waitUntilIdle()
        try calls.expect(2 * count, "\(count) observers on \(backend) got the next state")

        let left = await Nanoseconds.measure {
            await onDedicatedThreads(1) { _ in
                for observation in observations { observation.cancel() }
            }
            await loop.waitUntilIdle()
        }
        loop.send(1)
        await loop.waitUntilIdle()
        try calls.expect(2 * count, "\(count) observers that left \(backend) got no later state")
        await loop.stop()
        return joined &+ left
    }
}

/// Calls of every observer of one observer point, counted where the loop runs them.
private final class ObserverCalls: Sendable {
    let count = Atomic<Int>(0)

    func expect(_ expected: Int, _ what: String) throws(ScenarioFailure) {
        let actual = count.load(ordering: .relaxed)
        guard actual == expected else { throw ScenarioFailure("\(what): \(actual) calls, expected \(expected)") }
    }
}
