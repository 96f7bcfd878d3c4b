import Dispatch
import FeedbackLoop
import Synchronization

/// `service`: many live loops that each receive an event now and then — one loop per session in a
/// service with thousands of sessions — so that almost every event finds its loop idle and pays
/// the backend's whole wake-up, which `throughput` and `pingpong` hide by flooding one loop.
///
/// - Closed loop: N counter loops (1,000 and ``maxLoops``, 100,000 by default); one sender thread
///   sends round robin, each event only once the previous one was observed (the loop's observer
///   signals a `DispatchSemaphore` the sender waits on). Nanoseconds per event: the whole
///   round trip into an idle loop and back.
/// - Open loop: at fixed absolute rates (10k, 100k and 1M events/s), event `i` is due at
///   `start + i / rate` and goes to loop `i mod L` of L = 10,000 loops; each loop's observer
///   records, for every event it sees reduced, the time since that event's intended send in an
///   HDR histogram (no coordinated omission: a sender held up by slow sends does not hide the
///   delay it caused). The rate achieved says whether the contender sustained the rate offered.
///
/// Limit: the better of two versions of the same job written by hand, with the same reducer and
/// the same observer. One is the cheapest hand-off to another task: one task per unit, parked on
/// a continuation whenever it has nothing to do, resumed by the sender for each event — what the
/// asynchronous backends are built on, and what their wake-up is compared with (the rows "by
/// hand: a task parked per unit" and "× parked task"). The other needs no hand-off: a counter
/// behind a lock per unit, reduced on the sending thread and observed once the lock is released —
/// what `callback` does, which beats every hand-off. A limit is a floor: a backend that beats
/// it means the limit is not the best hand-written version of the job.
public struct ServiceScenario: Sendable {
    /// The open loop's offered rates, in events per second.
    public static let rates: [Double] = [10_000, 100_000, 1_000_000]
    /// The closed loop's largest population at the default size.
    public static let defaultMaxLoops = 100_000
    /// The closed loop's smaller population, and the callgrind workload's.
    public static let sessions = 1_000
    /// The loops the open loop spreads its events over at the default size.
    public static let openLoopLoops = 10_000

    public let size: BenchmarkSize
    /// The closed loop's largest population (`--loops`).
    public let maxLoops: Int

    /// `maxLoops` `nil`: ``defaultMaxLoops`` from 100,000 events up, proportionally fewer below,
    /// so that a tiny run stays tiny.
    public init(size: BenchmarkSize, maxLoops: Int? = nil) {
        self.size = size
        self.maxLoops = maxLoops ?? Self.scaled(Self.defaultMaxLoops, size)
    }

    static func scaled(_ full: Int, _ size: BenchmarkSize) -> Int {
        size.events >= 100_000 ? full : Swift.max(2, full * size.events / 100_000)
    }

    /// The closed loop's populations: 1,000 (scaled below 100,000 events) and ``maxLoops``.
    public var populations: [Int] {
        let small = Swift.min(Self.scaled(Self.sessions, size), maxLoops)
        return small == maxLoops ? [maxLoops] : [small, maxLoops]
    }

    /// The loops the open loop spreads its events over: 10,000, at most ``maxLoops``.
    public var openLoops: Int { Swift.min(Self.scaled(Self.openLoopLoops, size), maxLoops) }

    /// Closed-loop events for `loops` loops: every loop at least once, and a twentieth of the run's
    /// events (50,000 at the default size) so that the small population is measured long enough.
    func closedEvents(loops: Int) -> Int { Swift.max(loops, size.events / 20) }

    /// Open-loop events at `rate`: `latencyPhaseSeconds` of it, at most a fifth of the run's events
    /// (200,000 at the default size, 0.2 s at 1M events/s).
    func openEvents(rate: Double) -> Int {
        Swift.max(1, Swift.min(size.events / 5, Int(rate * size.latencyPhaseSeconds)))
    }

    /// The open loop's percentiles: issue 27's goals are set on p50 and p99.
    public static let percentiles: [(name: String, value: Double)] = [("p50", 50), ("p99", 99)]

    static func rateLabel(_ rate: Double) -> String {
        rate >= 1_000_000 ? "\(Int(rate / 1_000_000))M events/s" : "\(Int(rate / 1_000))k events/s"
    }

    /// Throws ``ScenarioFailure`` for a population outside 1 to ``ScalingScenario/maximumLoops``
    /// (the command line's `--loops` range), or for a run whose check fails.
    public func run(backends: [Backend], progress: Progress) async throws -> ScenarioReport {
        guard (1...ScalingScenario.maximumLoops).contains(maxLoops) else {
            throw ScenarioFailure("service: the most live loops must be between 1 and \(ScalingScenario.maximumLoops), not \(maxLoops)")
        }
        // Untimed: the scenario's first timed run paid the process's first use of this path (the
        // in-place limit's closed loop into 1,000 loops measured 78-100 ns per event as the first
        // run, 44 as a later one), and the limit is measured first.
        _ = try await Self.closedLoop(InPlaceUnits.self, backend: .callback, loops: populations[0], events: closedEvents(loops: populations[0]))
        var report = ScenarioReport(
            scenario: .service,
            limit: "the better of a counter per unit behind a lock, reduced in place, and a task parked per unit on a continuation (by hand)")
        for loops in populations {
            let label = "closed loop, \(loops) loops"
            let events = closedEvents(loops: loops)
            progress("service: \(label), limit in place")
            let inPlace = try await Self.closedLoop(
                InPlaceUnits.self, backend: .callback, loops: loops, events: events, repetitions: size.repetitions, floor: true)
            progress("service: \(label), limit parked task")
            let parked = try await Self.closedLoop(
                ParkedUnits.self, backend: .callback, loops: loops, events: events, repetitions: size.repetitions, floor: true)
            report.recordLimit(label, "ns/event", .lower, value: Swift.min(inPlace, parked))
            report.recordLimit("\(label), by hand: a task parked per unit", "ns/event", .lower, value: parked)
            for backend in backends {
                try await report.measure(backend) { report in
                    progress("service: \(label), \(backend)")
                    let nanoseconds = try await Self.closedLoop(
                        LoopUnits.self, backend: backend, loops: loops, events: events, repetitions: size.repetitions)
                    report.record(label, "ns/event", .lower, backend: backend.rawValue, value: nanoseconds)
                    report.record(label, "× parked task", .lower, backend: backend.rawValue, value: nanoseconds / parked)
                }
            }
        }
        for rate in Self.rates {
            let label = "open loop, \(Self.rateLabel(rate)), \(openLoops) loops"
            let events = openEvents(rate: rate)
            progress("service: \(label), limit in place")
            let inPlace = try await Self.openLoop(InPlaceUnits.self, backend: .callback, loops: openLoops, rate: rate, events: events)
            progress("service: \(label), limit parked task")
            let parked = try await Self.openLoop(ParkedUnits.self, backend: .callback, loops: openLoops, rate: rate, events: events)
            for ((metric, better, inPlace), (_, _, parked)) in zip(inPlace, parked) {
                report.recordLimit(label, metric, better, value: better == .higher ? Swift.max(inPlace, parked) : Swift.min(inPlace, parked))
            }
            for (metric, better, value) in parked {
                report.recordLimit("\(label), by hand: a task parked per unit", metric, better, value: value)
            }
            for backend in backends {
                try await report.measure(backend) { report in
                    progress("service: \(label), \(backend)")
                    let rows = try await Self.openLoop(LoopUnits.self, backend: backend, loops: openLoops, rate: rate, events: events)
                    for (metric, better, value) in rows {
                        report.record(label, metric, better, backend: backend.rawValue, value: value)
                    }
                    for ((metric, _, value), (_, _, handOff)) in zip(rows, parked) where metric == "p50 µs" || metric == "p99 µs" {
                        report.record(label, "\(metric.dropLast(3)) × parked task", .lower, backend: backend.rawValue, value: value / handOff)
                    }
                }
            }
        }
        return report
    }

    /// Events each of `units` units gets when `events` go round robin from unit 0.
    static func share(of unit: Int, events: Int, units: Int) -> Int {
        events / units + (unit < events % units ? 1 : 0)
    }

    /// Nanoseconds per event, closed loop: each event sent once the previous one was observed.
    ///
    /// The events are split into `repetitions` timed runs that go on round robin where the last
    /// one stopped, and the median run is reported, or the best for a limit (`floor`): the same
    /// time as one run, but a run that a neighbour preempted (a cheap contender's whole run is a
    /// few milliseconds) does not set it.
    static func closedLoop<Units: ServiceUnits>(
        _: Units.Type, backend: Backend, loops: Int, events: Int, repetitions: Int = 1, floor: Bool = false
    ) async throws -> Double {
        let observed = DispatchSemaphore(value: 0)
        let units = await Units(backend: backend, count: loops) { _, _ in observed.signal() }
        let runs = Swift.max(1, Swift.min(repetitions, events))
        var next = 0
        func timedRun() async -> Double {
            let first = next
            let count = events / runs + (next == 0 ? events % runs : 0)
            next += count
            let elapsed = await Nanoseconds.measure {
                await onDedicatedThreads(1) { _ in
                    for index in first..<(first + count) {
                        units.send(to: index % loops)
                        observed.wait()
                    }
                }
            }
            return Double(elapsed) / Double(count)
        }
        let perEvent = floor ? await best(of: runs, timedRun) : await median(of: runs, timedRun)
        try await units.finish("service, closed loop, \(Units.name(backend)), \(loops) loops") { share(of: $0, events: events, units: loops) }
        return perEvent
    }

    /// The open loop at `rate`: latency percentiles from each event's intended send time, and the
    /// rate achieved.
    static func openLoop<Units: ServiceUnits>(
        _: Units.Type, backend: Backend, loops: Int, rate: Double, events: Int
    ) async throws -> [(String, Measurement.Better, Double)] {
        let recorder = OpenLoopRecorder(expected: events, interval: 1e9 / rate, inOrder: false)
        // Unit `u`'s `n`th event is event `u + n * loops` of the run.
        let units = await Units(backend: backend, count: loops) { unit, ordinal in recorder.receive(unit + ordinal * loops) }
        let what = "service, open loop, \(Units.name(backend)), \(rateLabel(rate)) over \(loops) loops"
        recorder.begin()
        await onDedicatedThreads(1) { _ in
            for index in 0..<events {
                Nanoseconds.spin(until: recorder.intended(index))
                units.send(to: index % loops)
            }
        }
        try await recorder.waitForAll(seconds: 60, what)
        try await units.finish(what) { share(of: $0, events: events, units: loops) }
        var rows: [(String, Measurement.Better, Double)] = percentiles.map { name, percentile in
            ("\(name) µs", .lower, recorder.histogram.microseconds(atPercentile: percentile))
        }
        rows.append(("achieved kevents/s", .higher, recorder.rate / 1_000))
        return rows
    }
}

/// The units a service scenario sends into: the loops of a backend, or the limit's parked tasks.
protocol ServiceUnits: Sendable {
    static func name(_ backend: Backend) -> String
    /// `count` units, each started and idle; `observed(unit, n)` is called once for the `n`th
    /// event (from 0) the unit was seen to reduce, from whatever thread reduced it.
    init(backend: Backend, count: Int, observed: @escaping @Sendable (_ unit: Int, _ ordinal: Int) -> Void) async
    /// Sends one event (an increment) into `unit`.
    func send(to unit: Int)
    /// Checks that unit `u` reduced and was seen to reduce `expected(u)` events, none dropped and
    /// no effect started, then stops every unit.
    func finish(_ what: String, expected: (Int) -> Int) async throws
}

/// Hands each event a unit newly reports to the scenario's observer, exactly once: a unit reports
/// its count, which may have grown by several events since the last report.
final class Sightings: Sendable {
    let unit: Int
    private let seen = Atomic<Int>(0)
    private let observed: @Sendable (Int, Int) -> Void

    init(unit: Int, observed: @escaping @Sendable (Int, Int) -> Void) {
        self.unit = unit
        self.observed = observed
    }

    /// Events seen so far.
    var count: Int { seen.load(ordering: .acquiring) }

    /// Called one report at a time per unit (a loop calls its observer one call at a time; the
    /// limit's unit from its one task), so a load and a store suffice.
    func report(_ count: Int) {
        let before = seen.load(ordering: .relaxed)
        guard count > before else { return }
        seen.store(count, ordering: .releasing)
        for ordinal in before..<count { observed(unit, ordinal) }
    }
}

/// A backend's counter loops, each with an observer.
struct LoopUnits: ServiceUnits {
    let loops: [Loop<Int, Int>]
    let observations: [Observation]
    let sightings: [Sightings]

    static func name(_ backend: Backend) -> String { backend.rawValue }

    init(backend: Backend, count: Int, observed: @escaping @Sendable (Int, Int) -> Void) async {
        sightings = (0..<count).map { Sightings(unit: $0, observed: observed) }
        loops = (0..<count).map { _ in Systems.counter(backend) }
        observations = zip(loops, sightings).map { loop, sightings in loop.observe { sightings.report($0) } }
        for loop in loops { await loop.waitUntilIdle() }
    }

    func send(to unit: Int) { loops[unit].send(1) }

    func finish(_ what: String, expected: (Int) -> Int) async throws {
        for (unit, loop) in loops.enumerated() {
            await loop.waitUntilIdle()
            let sent = expected(unit)
            do {
                try RunCheck(
                    run: what, expectedState: sent, finalState: loop.state, expectedReduced: sent,
                    statistics: loop.statistics, expectedStarted: 0
                ).validate()
                guard sightings[unit].count == sent else {
                    throw ScenarioFailure("\(what): \(sightings[unit].count) events observed, \(sent) sent")
                }
            } catch {
                throw ScenarioFailure("\(error), loop \(unit)")
            }
        }
        for observation in observations { observation.cancel() }
        for loop in loops { await loop.stop() }
    }
}

/// One of the limit's two versions: per unit, a counter behind a lock, reduced on the sending
/// thread and reported once the lock is released — no hand-off at all. One sender at a time, so
/// each unit's reports come one at a time.
struct InPlaceUnits: ServiceUnits {
    let counters: [Lock<Int>]
    let sightings: [Sightings]
    let reduce: @Sendable (inout Int, Int) -> Void

    static func name(_ backend: Backend) -> String { "limit in place" }

    init(backend: Backend, count: Int, observed: @escaping @Sendable (Int, Int) -> Void) async {
        reduce = opaque(Systems.add)
        counters = (0..<count).map { _ in Lock(0) }
        sightings = (0..<count).map { Sightings(unit: $0, observed: observed) }
    }

    func send(to unit: Int) {
        let count = counters[unit].withLock { count in
            reduce(&count, 1)
            return count
        }
        sightings[unit].report(count)
    }

    func finish(_ what: String, expected: (Int) -> Int) async throws {
        for (unit, counter) in counters.enumerated() {
            let reduced = counter.withLock { $0 }
            let sent = expected(unit)
            guard reduced == sent, sightings[unit].count == sent else {
                throw ScenarioFailure("\(what): unit \(unit) reduced \(reduced) and was seen to reduce \(sightings[unit].count) events, \(sent) sent")
            }
        }
    }
}

/// The other: per unit, a task that owns a counter and parks on a continuation whenever its inbox
/// is empty, and a sender that resumes it with the event.
struct ParkedUnits: ServiceUnits {
    let units: [ParkedUnit]
    let tasks: [Task<Int, Never>]
    let sightings: [Sightings]

    static func name(_ backend: Backend) -> String { "limit parked task" }

    init(backend: Backend, count: Int, observed: @escaping @Sendable (Int, Int) -> Void) async {
        let sightings = (0..<count).map { Sightings(unit: $0, observed: observed) }
        let units = (0..<count).map { _ in ParkedUnit() }
        let reduce = opaque(Systems.add)
        var tasks: [Task<Int, Never>] = []
        tasks.reserveCapacity(count)
        await withCheckedContinuation { (started: CheckedContinuation<Void, Never>) in
            let starting = Countdown(count, whenZero: { started.resume() })
            for (unit, sightings) in zip(units, sightings) {
                tasks.append(Task {
                    starting.tick()
                    return await unit.consume(reduce: reduce, report: sightings.report)
                })
            }
        }
        self.units = units
        self.tasks = tasks
        self.sightings = sightings
    }

    func send(to unit: Int) { units[unit].send() }

    func finish(_ what: String, expected: (Int) -> Int) async throws {
        for unit in units { unit.close() }
        for (unit, task) in tasks.enumerated() {
            let reduced = await task.value
            let sent = expected(unit)
            guard reduced == sent, sightings[unit].count == sent else {
                throw ScenarioFailure("\(what): unit \(unit) reduced \(reduced) and was seen to reduce \(sightings[unit].count) events, \(sent) sent")
            }
        }
    }
}

/// One unit of the limit: an inbox of events and the continuation of its task when parked.
final class ParkedUnit: Sendable {
    private struct Inbox {
        var pending = 0
        var parked: UnsafeContinuation<Int, Never>?
        var closed = false
    }

    private let inbox = InlineLock(Inbox())

    /// Hands one event to the unit: resumes its task if parked, else leaves it in the inbox.
    func send() {
        let parked = inbox.withLock { inbox -> UnsafeContinuation<Int, Never>? in
            guard let parked = inbox.parked else {
                inbox.pending += 1
                return nil
            }
            inbox.parked = nil
            return parked
        }
        parked?.resume(returning: 1)
    }

    /// Ends the task's loop once the inbox is empty.
    func close() {
        let parked = inbox.withLock { inbox -> UnsafeContinuation<Int, Never>? in
            inbox.closed = true
            defer { inbox.parked = nil }
            return inbox.parked
        }
        parked?.resume(returning: 0)
    }

    /// The task's body: reduces every event into its counter and reports the count after each
    /// wake-up; returns the count once closed.
    func consume(reduce: (inout Int, Int) -> Void, report: (Int) -> Void) async -> Int {
        var count = 0
        while true {
            let events = await next()
            if events == 0 { return count }
            for _ in 0..<events { reduce(&count, 1) }
            report(count)
        }
    }

    /// The events in the inbox, parking until there is one; 0 once closed and empty.
    private func next() async -> Int {
        // Unsafe: the inbox hands the continuation out exactly once (`send` and `close` take it
        // under the lock), and the checked one costs ~75 ns more per event (MEASUREMENTS.md).
        await withUnsafeContinuation { (parked: UnsafeContinuation<Int, Never>) in
            let ready = inbox.withLock { inbox -> Int? in
                if inbox.pending > 0 {
                    defer { inbox.pending = 0 }
                    return inbox.pending
                }
                if inbox.closed { return 0 }
                inbox.parked = parked
                return nil
            }
            if let ready { parked.resume(returning: ready) }
        }
    }
}

/// The other hand-written hand-off, measured in `Benchmarks/scripts/callgrind.sh` beside the limit: an actor
/// per unit, entered by a new `Task` per event — what the actor backend builds on.
struct ActorUnits: ServiceUnits {
    actor Counter {
        private(set) var count = 0
        private let reduce: @Sendable (inout Int, Int) -> Void
        private let sightings: Sightings

        init(reduce: @escaping @Sendable (inout Int, Int) -> Void, sightings: Sightings) {
            self.reduce = reduce
            self.sightings = sightings
        }

        func receive() {
            reduce(&count, 1)
            sightings.report(count)
        }
    }

    let counters: [Counter]
    let sightings: [Sightings]

    static func name(_ backend: Backend) -> String { "bare actor" }

    init(backend: Backend, count: Int, observed: @escaping @Sendable (Int, Int) -> Void) async {
        let reduce = opaque(Systems.add)
        sightings = (0..<count).map { Sightings(unit: $0, observed: observed) }
        counters = sightings.map { Counter(reduce: reduce, sightings: $0) }
    }

    func send(to unit: Int) {
        let counter = counters[unit]
        Task { await counter.receive() }
    }

    /// Only after every event was observed: the tasks that carried them have then entered their
    /// actor, and no other task is left to enter it.
    func finish(_ what: String, expected: (Int) -> Int) async throws {
        for (unit, counter) in counters.enumerated() {
            let reduced = await counter.count
            let sent = expected(unit)
            guard reduced == sent, sightings[unit].count == sent else {
                throw ScenarioFailure("\(what): actor \(unit) reduced \(reduced) and was seen to reduce \(sightings[unit].count) events, \(sent) sent")
            }
        }
    }
}
