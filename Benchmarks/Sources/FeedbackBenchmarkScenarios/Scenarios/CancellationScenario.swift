import FeedbackLoop

/// `cancellation`, in three parts, every effect a never-ending `.run` parked until cancelled:
///
/// - switch-latest churn: each event changes a `skippingRepeated` query, so the running effect is
///   cancelled and another started. Sent back to back, timed until every cancelled body has seen
///   its cancellation; then a paced run (each event sent once the previous effect is parked)
///   measures cancellation latency from the state change (`onTransition`) to the effect's
///   cancellation handler. Started/cancelled/leaked counts and RSS before and after.
/// - set-based churn: a `requests` feedback keeps `concurrentRequests` effects running while each
///   event retires one and adds one; then the same requests as keyed children of an
///   `IdentifiedStates` (`KeyedChildScope`), whose cost per event does not grow with their number.
/// - stop under load: `inFlightAtStop` effects running, then `stop()`, timed until it returns with
///   every effect ended.
///
/// Limits: the bare primitive, a `Task` parked the same way, spawned and cancelled.
public struct CancellationScenario: Sendable {
    public let size: BenchmarkSize

    public init(size: BenchmarkSize) { self.size = size }

    public func run(backends: [Backend], peer: Bool = false, progress: Progress) async throws -> ScenarioReport {
        var report = ScenarioReport(scenario: .cancellation, limit: "bare Task spawn + cancel")
        let cycles = size.churnCycles
        let churnLabel = "switch-latest, \(cycles) cycles"
        let latencyLabel = "cancellation latency"
        let setLabel = "set churn, \(size.concurrentRequests) requests"
        let keyedLabel = "set churn, \(size.concurrentRequests) keyed children"
        let stopLabel = "stop, \(size.inFlightAtStop) in flight"

        progress("cancellation: limits")
        let bareChurn = try await Self.bareChurn(cycles: cycles)
        report.recordLimit(churnLabel, "ns/cycle", .lower, value: bareChurn)
        report.recordLimit(churnLabel, "kcancels/s", .higher, value: 1e6 / bareChurn)
        let bareLatency = try await Self.bareCancellationLatency(cycles: size.cancellationLatencyCycles)
        report.recordLimit(latencyLabel, "p50 µs", .lower, value: bareLatency.microseconds(atPercentile: 50))
        report.recordLimit(latencyLabel, "p99 µs", .lower, value: bareLatency.microseconds(atPercentile: 99))
        let bareRing = try await Self.bareRing(concurrent: size.concurrentRequests, events: size.setChurnEvents)
        report.recordLimit(setLabel, "ns/event", .lower, value: bareRing)
        report.recordLimit(keyedLabel, "ns/event", .lower, value: bareRing)
        report.recordLimit(stopLabel, "ms to quiesce", .lower, value: try await Self.bareStop(inFlight: size.inFlightAtStop))

        for backend in backends {
            try await report.measure(backend) { report in
                let name = backend.rawValue
                progress("cancellation: switch-latest churn, \(backend)")
                let churn = try await Self.churn(backend, cycles: cycles)
                report.record(churnLabel, "ns/cycle", .lower, backend: name, value: churn.nanosecondsPerCycle)
                report.record(churnLabel, "kcancels/s", .higher, backend: name, value: 1e6 / churn.nanosecondsPerCycle)
                report.record(churnLabel, "effects started", .exact, backend: name, value: Double(churn.started))
                report.record(churnLabel, "effects cancelled", .exact, backend: name, value: Double(churn.cancelled))
                report.record(churnLabel, "effects leaked", .exact, backend: name, value: Double(churn.leaked))
                report.record(churnLabel, "RSS before MiB", .exact, backend: name, value: churn.residentBefore / 1_048_576)
                report.record(churnLabel, "RSS after MiB", .exact, backend: name, value: churn.residentAfter / 1_048_576)

                progress("cancellation: latency, \(backend)")
                let latency = try await Self.cancellationLatency(backend, cycles: size.cancellationLatencyCycles)
                report.record(latencyLabel, "p50 µs", .lower, backend: name, value: latency.microseconds(atPercentile: 50))
                report.record(latencyLabel, "p99 µs", .lower, backend: name, value: latency.microseconds(atPercentile: 99))

                progress("cancellation: set churn, \(backend)")
                let setChurn = try await Self.setChurn(backend, concurrent: size.concurrentRequests, events: size.setChurnEvents)
                report.record(setLabel, "ns/event", .lower, backend: name, value: setChurn)
                progress("cancellation: set churn as keyed children, \(backend)")
                let keyedChurn = try await Self.keyedSetChurn(
                    backend, concurrent: size.concurrentRequests, events: size.setChurnEvents)
                report.record(keyedLabel, "ns/event", .lower, backend: name, value: keyedChurn)

                progress("cancellation: stop under load, \(backend)")
                let stop = try await Self.stopUnderLoad(backend, inFlight: size.inFlightAtStop)
                report.record(stopLabel, "ms to quiesce", .lower, backend: name, value: stop)
            }
        }
        // The peer runs the switch-latest churn only: its `system` has no set-based feedback, no
        // transition hook to stamp latencies from, and nothing to wait for at stop (cancelling
        // the subscription cancels every effect synchronously).
        if peer {
            try await report.measurePeer { report in
                progress("cancellation: switch-latest churn, \(PeerSystems.name)")
                let nanoseconds = try Self.peerChurn(cycles: cycles)
                let name = PeerSystems.name
                report.record(churnLabel, "ns/cycle", .lower, backend: name, value: nanoseconds)
                report.record(churnLabel, "kcancels/s", .higher, backend: name, value: 1e6 / nanoseconds)
                report.record(churnLabel, "effects started", .exact, backend: name, value: Double(cycles + 1))
                report.record(churnLabel, "effects cancelled", .exact, backend: name, value: Double(cycles + 1))
                report.record(churnLabel, "effects leaked", .exact, backend: name, value: 0)
            }
        }
        return report
    }

    // MARK: Switch-latest churn

    public struct ChurnResult: Sendable {
        public var nanosecondsPerCycle: Double
        public var started: Int
        public var cancelled: Int
        public var leaked: Int
        public var residentBefore: Double
        public var residentAfter: Double
    }

    /// `cycles` back-to-back switches, timed until every cancelled effect saw its cancellation,
    /// then checked before and after `stop()`.
    public static func churn(_ backend: Backend, cycles: Int) async throws -> ChurnResult {
        ResidentMemory.trim()
        let residentBefore = ResidentMemory.bytes()
        let census = EffectCensus()
        let loop = Systems.churn(backend, census: census)
        let elapsed = try await Nanoseconds.measure {
            await onDedicatedThreads(1) { _ in
                for _ in 0..<cycles { loop.send(.next) }
            }
            _ = try await loop.sendAndWait(.sync)
            try await waitUntil("\(cycles) cancelled effects to end (\(backend))") { census.counts.cancelled >= cycles }
            try await settle(loop, reduced: cycles + 1)
        }
        let what = "cancellation, switch-latest, \(backend)"
        try RunCheck(
            run: what, expectedState: cycles, finalState: loop.state.generation, expectedReduced: cycles + 1,
            statistics: loop.statistics, expectedRunning: 1, expectedStarted: cycles + 1, expectedCancelled: cycles
        ).validate()
        await loop.stop()
        let check = RunCheck(
            run: "\(what), after stop", expectedState: cycles, finalState: loop.state.generation,
            statistics: loop.statistics, expectedStarted: cycles + 1, expectedCancelled: cycles + 1,
            census: census.counts)
        try check.validate()
        ResidentMemory.trim()
        return ChurnResult(
            nanosecondsPerCycle: Double(elapsed) / Double(cycles),
            started: check.statistics.effectsStarted,
            cancelled: check.statistics.effectsCancelled,
            leaked: check.leaked,
            residentBefore: Double(residentBefore),
            residentAfter: Double(ResidentMemory.bytes()))
    }

    /// The peer's switch-latest churn: nanoseconds per cycle, after checking that every effect
    /// started once per generation and every one was cancelled by the stop.
    static func peerChurn(cycles: Int) throws -> Double {
        let census = EffectCensus()
        let loop = PeerSystems.churn(census: census)
        let elapsed = Nanoseconds.measure {
            for _ in 0..<cycles { loop.send(.next) }
        }
        let running = census.counts
        guard running.started == cycles + 1, running.cancelled == cycles else {
            throw ScenarioFailure("cancellation, switch-latest, \(PeerSystems.name): \(running.started) effects started and \(running.cancelled) cancelled after \(cycles) switches, expected \(cycles + 1) and \(cycles)")
        }
        loop.stop()
        try PeerCheck(
            run: "cancellation, switch-latest, \(PeerSystems.name)", expectedState: cycles, finalState: loop.state.generation,
            reduced: loop.reduced, census: census.counts, expectedStarted: cycles + 1
        ).validate()
        return Double(elapsed) / Double(cycles)
    }

    /// The limit: a parked task spawned and the previous one cancelled, `cycles` times.
    static func bareChurn(cycles: Int) async throws -> Double {
        let census = EffectCensus()
        let elapsed = try await Nanoseconds.measure {
            let last = await onDedicatedThread { () -> Task<Void, Never> in
                var running = Task { await census.parkUntilCancelled() }
                for _ in 0..<cycles {
                    let next = Task { await census.parkUntilCancelled() }
                    running.cancel()
                    running = next
                }
                return running
            }
            try await waitUntil("\(cycles) bare tasks to end") { census.counts.cancelled >= cycles }
            last.cancel()
        }
        return Double(elapsed) / Double(cycles)
    }

    // MARK: Cancellation latency

    /// Paced switches: each event is sent once the previous effect's body has begun, so the
    /// latency is that of cancelling a running effect, not of a task that never got to run.
    static func cancellationLatency(_ backend: Backend, cycles: Int) async throws -> LatencyHistogram {
        let census = EffectCensus(stamps: TransitionStamps(count: cycles + 2))
        let loop = Systems.churn(backend, census: census)
        let paced = await onDedicatedThread { () -> Bool in
            for generation in 1...cycles {
                guard spinUntil({ census.counts.started >= generation }) else { return false }
                loop.send(.next)
            }
            return true
        }
        guard paced else { throw ScenarioFailure("cancellation latency, \(backend): an effect never began") }
        _ = try await loop.sendAndWait(.sync)
        await loop.stop()
        try RunCheck(
            run: "cancellation latency, \(backend)", expectedState: cycles, finalState: loop.state.generation,
            statistics: loop.statistics, expectedStarted: cycles + 1, expectedCancelled: cycles + 1,
            census: census.counts
        ).validate()
        // The last effect was cancelled by stop, not by a state change: it has no latency sample.
        return census.cancellationLatency!
    }

    static func bareCancellationLatency(cycles: Int) async throws -> LatencyHistogram {
        let stamps = TransitionStamps(count: cycles + 2)
        let census = EffectCensus(stamps: stamps)
        let paced = await onDedicatedThread { () -> Bool in
            var running = Task { await census.parkUntilCancelled(generation: 0) }
            for generation in 1...cycles {
                guard spinUntil({ census.counts.started >= generation }) else { return false }
                stamps[generation] = Nanoseconds.now()
                running.cancel()
                running = Task { await census.parkUntilCancelled(generation: generation) }
            }
            running.cancel()
            return true
        }
        guard paced else { throw ScenarioFailure("bare cancellation latency: a task never began") }
        try await waitUntil("bare tasks to end") { census.counts.cancelled >= cycles + 1 }
        return census.cancellationLatency!
    }

    /// Spins for at most 10 s until `condition` holds.
    private static func spinUntil(_ condition: () -> Bool) -> Bool {
        let deadline = Nanoseconds.now() + 10_000_000_000
        while !condition() {
            if Nanoseconds.now() > deadline { return false }
        }
        return true
    }

    // MARK: Set-based churn

    /// Nanoseconds per event while `concurrent` requests run and each event replaces one.
    public static func setChurn(_ backend: Backend, concurrent: Int, events: Int) async throws -> Double {
        let census = EffectCensus()
        return try await requestChurn(
            Systems.requests(backend, concurrent: concurrent, census: census), census: census,
            rotate: .rotate(concurrent: concurrent), sync: .sync, next: \.next,
            concurrent: concurrent, events: events, what: "cancellation, set churn, \(backend)")
    }

    /// ``setChurn(_:concurrent:events:)`` with the requests as keyed children.
    public static func keyedSetChurn(_ backend: Backend, concurrent: Int, events: Int) async throws -> Double {
        let census = EffectCensus()
        return try await requestChurn(
            Systems.keyedRequests(backend, concurrent: concurrent, census: census), census: census,
            rotate: .rotate(concurrent: concurrent), sync: .sync, next: \.next,
            concurrent: concurrent, events: events, what: "cancellation, set churn as keyed children, \(backend)")
    }

    /// Sends `rotate` `events` times from a thread of its own while `concurrent` requests run;
    /// checks that each rotation started one effect and ended one, and none leaked at stop.
    static func requestChurn<State: Sendable, Event: Sendable>(
        _ loop: Loop<State, Event>, census: EffectCensus, rotate: Event, sync: Event, next: KeyPath<State, Int> & Sendable,
        concurrent: Int, events: Int, what: String
    ) async throws -> Double {
        try await waitUntil("\(concurrent) requests to begin (\(what))") { census.counts.started >= concurrent }
        let elapsed = try await Nanoseconds.measure {
            await onDedicatedThreads(1) { _ in
                for _ in 0..<events { loop.send(rotate) }
            }
            _ = try await loop.sendAndWait(sync)
            try await waitUntil("\(events) retired requests to end (\(what))") { census.counts.cancelled >= events }
            try await settle(loop, reduced: events + 1)
        }
        try RunCheck(
            run: what, expectedState: concurrent + events, finalState: loop.state[keyPath: next], expectedReduced: events + 1,
            statistics: loop.statistics, expectedRunning: concurrent, expectedStarted: concurrent + events,
            expectedCancelled: events
        ).validate()
        await loop.stop()
        try RunCheck(
            run: "\(what), after stop", expectedState: concurrent + events, finalState: loop.state[keyPath: next],
            statistics: loop.statistics, expectedCancelled: concurrent + events, census: census.counts
        ).validate()
        return Double(elapsed) / Double(events)
    }

    /// The limit: a ring of `concurrent` parked tasks; each step cancels the oldest and spawns one.
    static func bareRing(concurrent: Int, events: Int) async throws -> Double {
        let census = EffectCensus()
        var ring = (0..<concurrent).map { _ in Task { await census.parkUntilCancelled() } }
        try await waitUntil("\(concurrent) bare tasks to begin") { census.counts.started >= concurrent }
        let initial = ring
        let elapsed = try await Nanoseconds.measure {
            ring = await onDedicatedThread { () -> [Task<Void, Never>] in
                var ring = initial
                for step in 0..<events {
                    let slot = step % concurrent
                    ring[slot].cancel()
                    ring[slot] = Task { await census.parkUntilCancelled() }
                }
                return ring
            }
            try await waitUntil("\(events) bare tasks to end") { census.counts.cancelled >= events }
        }
        for task in ring { task.cancel() }
        for task in ring { await task.value }
        return Double(elapsed) / Double(events)
    }

    // MARK: Stop under load

    /// Milliseconds for `stop()` to return with `inFlight` running effects.
    public static func stopUnderLoad(_ backend: Backend, inFlight: Int) async throws -> Double {
        let census = EffectCensus()
        let loop = Systems.requests(backend, concurrent: inFlight, census: census)
        try await waitUntil("\(inFlight) effects to begin (\(backend))") { census.counts.started >= inFlight }
        let elapsed = await Nanoseconds.measure { await loop.stop() }
        try RunCheck(
            run: "cancellation, stop under load, \(backend)", expectedState: inFlight, finalState: loop.state.next,
            statistics: loop.statistics, expectedStarted: inFlight, expectedCancelled: inFlight, census: census.counts
        ).validate()
        return Double(elapsed) / 1e6
    }

    static func bareStop(inFlight: Int) async throws -> Double {
        let census = EffectCensus()
        let tasks = (0..<inFlight).map { _ in Task { await census.parkUntilCancelled() } }
        try await waitUntil("\(inFlight) bare tasks to begin") { census.counts.started >= inFlight }
        let elapsed = await Nanoseconds.measure {
            for task in tasks { task.cancel() }
            for task in tasks { await task.value }
        }
        return Double(elapsed) / 1e6
    }
}
