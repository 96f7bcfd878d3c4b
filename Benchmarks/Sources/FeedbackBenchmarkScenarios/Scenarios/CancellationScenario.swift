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
/// Limits: the bare primitive, a `Task` parked the same way, spawned and cancelled, each the best
/// of `repetitions` runs (a limit is a floor: a run the neighbours slowed is none). Cancellation
/// latency: the better of a cancel on a thread of its own and one on the cooperative pool. Stop:
/// the better of awaiting each task and one continuation resumed by the last task to end.
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
        let bareChurn = try await best(of: size.repetitions) { try await Self.bareChurn(cycles: cycles) }
        report.recordLimit(churnLabel, "ns/cycle", .lower, value: bareChurn)
        report.recordLimit(churnLabel, "kcancels/s", .higher, value: 1e6 / bareChurn)
        let bareLatency = try await Self.bareCancellationLatency(
            cycles: size.cancellationLatencyCycles, repetitions: size.repetitions)
        report.recordLimit(latencyLabel, "p50 µs", .lower, value: bareLatency.p50)
        report.recordLimit(latencyLabel, "p99 µs", .lower, value: bareLatency.p99)
        let bareRing = try await best(of: size.repetitions) {
            try await Self.bareRing(concurrent: size.concurrentRequests, events: size.setChurnEvents)
        }
        report.recordLimit(setLabel, "ns/event", .lower, value: bareRing)
        report.recordLimit(keyedLabel, "ns/event", .lower, value: bareRing)
        let bareStop = try await Self.bareStop(inFlight: size.inFlightAtStop, repetitions: size.repetitions)
        report.recordLimit(stopLabel, "ms to quiesce", .lower, value: bareStop)

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

    /// The limit of cancellation latency: the best, percentile by percentile, of `repetitions`
    /// runs each of two ways to cancel a parked task written by hand, paced as the backends are
    /// (each switch once the running task's body began). Where the cancel runs decides its cost:
    /// on a thread of its own, as `callback` cancels on the sender's thread, or on the
    /// cooperative pool, where `actor`'s drain cancels, often on the thread that has just run
    /// (and parked) the task it cancels, whose memory is still in that core's cache. Which of
    /// the two is cheaper, and by how much, changes from run to run with where the scheduler
    /// puts the threads (a run's p50 on either is 0.06 µs or several times that): the best run
    /// is the floor.
    static func bareCancellationLatency(cycles: Int, repetitions: Int) async throws -> (p50: Double, p99: Double) {
        var p50 = Double.infinity, p99 = Double.infinity
        for _ in 0..<Swift.max(1, repetitions) {
            for histogram in [
                try await bareCancellationLatencyFromAThread(cycles: cycles),
                try await bareCancellationLatencyOnThePool(cycles: cycles),
            ] {
                p50 = Swift.min(p50, histogram.microseconds(atPercentile: 50))
                p99 = Swift.min(p99, histogram.microseconds(atPercentile: 99))
            }
        }
        return (p50, p99)
    }

    /// Stamps and cancels on the pacing thread itself.
    static func bareCancellationLatencyFromAThread(cycles: Int) async throws -> LatencyHistogram {
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

    /// The pacing thread hands each switch to an actor, which stamps and cancels on the pool.
    static func bareCancellationLatencyOnThePool(cycles: Int) async throws -> LatencyHistogram {
        let stamps = TransitionStamps(count: cycles + 2)
        let census = EffectCensus(stamps: stamps)
        let switcher = ParkedTaskSwitcher(census: census, stamps: stamps)
        let paced = await onDedicatedThread { () -> Bool in
            for generation in 1...cycles {
                guard spinUntil({ census.counts.started >= generation }) else { return false }
                Task { await switcher.switchTo(generation) }
            }
            return true
        }
        guard paced else { throw ScenarioFailure("bare cancellation latency on the pool: a task never began") }
        try await waitUntil("bare tasks on the pool to begin") { census.counts.started >= cycles + 1 }
        await switcher.stop()
        try await waitUntil("bare tasks on the pool to end") { census.counts.cancelled >= cycles + 1 }
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

    /// The limit of a stop: the best of `repetitions` runs each of two hand-written ways to
    /// cancel `inFlight` parked tasks and wait until every one has ended: awaiting each task's
    /// value in turn (a suspension per task still running), or one continuation resumed by the
    /// last task to end (what a loop's stop waits on).
    static func bareStop(inFlight: Int, repetitions: Int) async throws -> Double {
        let awaited = try await best(of: repetitions) { try await bareStopAwaitingEach(inFlight: inFlight) }
        let counted = try await best(of: repetitions) { try await bareStopCountingDown(inFlight: inFlight) }
        return Swift.min(awaited, counted)
    }

    static func bareStopAwaitingEach(inFlight: Int) async throws -> Double {
        let census = EffectCensus()
        let tasks = (0..<inFlight).map { _ in Task { await census.parkUntilCancelled() } }
        try await waitUntil("\(inFlight) bare tasks to begin") { census.counts.started >= inFlight }
        let elapsed = await Nanoseconds.measure {
            for task in tasks { task.cancel() }
            for task in tasks { await task.value }
        }
        return Double(elapsed) / 1e6
    }

    static func bareStopCountingDown(inFlight: Int) async throws -> Double {
        let census = EffectCensus()
        let ended = EndedCountdown(inFlight)
        let tasks = (0..<inFlight).map { _ in
            Task {
                await census.parkUntilCancelled()
                ended.tick()
            }
        }
        try await waitUntil("\(inFlight) bare tasks to begin") { census.counts.started >= inFlight }
        let elapsed = await Nanoseconds.measure {
            for task in tasks { task.cancel() }
            await ended.wait()
        }
        return Double(elapsed) / 1e6
    }
}

/// The bare cancellation latency's switch on the pool: cancels the running parked task and
/// starts the next, in the actor's turn, as a loop on `actor` does in its drain.
private actor ParkedTaskSwitcher {
    private let census: EffectCensus
    private let stamps: TransitionStamps
    private var running: Task<Void, Never>

    init(census: EffectCensus, stamps: TransitionStamps) {
        self.census = census
        self.stamps = stamps
        self.running = Task { await census.parkUntilCancelled(generation: 0) }
    }

    func switchTo(_ generation: Int) {
        stamps[generation] = Nanoseconds.now()
        running.cancel()
        let census = self.census
        running = Task { await census.parkUntilCancelled(generation: generation) }
    }

    func stop() {
        running.cancel()
    }
}

/// Resumes one waiter once `count` tasks have ended, as a loop's stop is resumed by its last
/// effect to end.
private final class EndedCountdown: Sendable {
    private enum State {
        case counting(remaining: Int, waiter: CheckedContinuation<Void, Never>?)
        case done
    }

    private let state: Lock<State>

    init(_ count: Int) {
        state = Lock(.counting(remaining: count, waiter: nil))
    }

    func tick() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard case .counting(let remaining, let waiter) = state else { return nil }
            if remaining > 1 {
                state = .counting(remaining: remaining - 1, waiter: waiter)
                return nil
            }
            state = .done
            return waiter
        }
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                guard case .counting(let remaining, _) = state else { return true }
                state = .counting(remaining: remaining, waiter: continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }
}
