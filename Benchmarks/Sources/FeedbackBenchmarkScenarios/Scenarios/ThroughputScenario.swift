import Dispatch
import FeedbackLoop

/// `throughput`: N external sends into a counter loop, from 1 and from 4 sender threads, timed
/// until the loop is idle again (so the actor backend's queued events count too).
///
/// Limit: the bare reducer loop doing the same additions; with 4 senders, the best of the
/// hand-written serialisations of the same reducer: one lock taken per event; a combining queue
/// whose events the thread that finds it idle reduces, in batches, outside the lock (the shape
/// `callback` drains in), taking each batch at once or after a pause when the last was small; and
/// a queue drained by a consumer thread of its own (the shape of `actor` and `stream`, whose
/// senders only append).
public struct ThroughputScenario: Sendable {
    public static let senderCounts = [1, 4]

    public let size: BenchmarkSize

    public init(size: BenchmarkSize) { self.size = size }

    public func run(backends: [Backend], peer: Bool = false, progress: Progress) async throws -> ScenarioReport {
        var report = ScenarioReport(
            scenario: .throughput,
            limit: "bare reducer loop (4 senders: the best of one lock per event, a combining queue drained in place, unpaced or paced, and a queue drained by a consumer thread)")
        for senders in Self.senderCounts {
            let label = senders == 1 ? "1 sender" : "\(senders) senders"
            progress("throughput: \(label), limit")
            let limit = await best(of: size.repetitions) {
                await Self.bare(events: size.events, senders: senders)
            }
            report.recordLimit(label, "ns/event", .lower, value: limit)
            report.recordLimit(label, "Mevents/s", .higher, value: 1_000 / limit)
            for backend in backends {
                try await report.measure(backend) { report in
                    progress("throughput: \(label), \(backend)")
                    let nanoseconds = try await median(of: size.repetitions) {
                        try await Self.measure(backend, events: size.events, senders: senders)
                    }
                    report.record(label, "ns/event", .lower, backend: backend.rawValue, value: nanoseconds)
                    report.record(label, "Mevents/s", .higher, backend: backend.rawValue, value: 1_000 / nanoseconds)
                }
            }
            if peer {
                try await report.measurePeer { report in
                    progress("throughput: \(label), \(PeerSystems.name)")
                    let nanoseconds = try await median(of: size.repetitions) {
                        try await Self.measurePeer(events: size.events, senders: senders)
                    }
                    report.record(label, "ns/event", .lower, backend: PeerSystems.name, value: nanoseconds)
                    report.record(label, "Mevents/s", .higher, backend: PeerSystems.name, value: 1_000 / nanoseconds)
                }
            }
        }
        return report
    }

    /// Nanoseconds per event for `events` sends split over `senders` threads, after checking that
    /// the loop reduced every one of them.
    public static func measure(_ backend: Backend, events: Int, senders: Int) async throws -> Double {
        let loop = Systems.counter(backend)
        let shares = split(events, into: senders)
        let elapsed = await Nanoseconds.measure {
            await onDedicatedThreads(senders) { sender in
                for _ in 0..<shares[sender] { loop.send(1) }
            }
            await loop.waitUntilIdle()
        }
        try check(backend, senders: senders, sent: events, loop: loop)
        await loop.stop()
        return Double(elapsed) / Double(events)
    }

    /// The peer's nanoseconds per event. It reduces on the sending thread (or on the one already
    /// reducing), so when every sender has returned every event has been reduced.
    public static func measurePeer(events: Int, senders: Int) async throws -> Double {
        let loop = PeerSystems.counter()
        let shares = split(events, into: senders)
        let elapsed = await Nanoseconds.measure {
            await onDedicatedThreads(senders) { sender in
                for _ in 0..<shares[sender] { loop.send(1) }
            }
        }
        try PeerCheck(run: "throughput, \(senders) senders, \(PeerSystems.name)", expectedState: events, finalState: loop.state, reduced: loop.reduced)
            .validate()
        loop.stop()
        return Double(elapsed) / Double(events)
    }

    /// The run's check: the counter equals the number of sends and each was reduced.
    public static func check(_ backend: Backend, senders: Int, sent: Int, loop: Loop<Int, Int>) throws(ScenarioFailure) {
        try RunCheck(
            run: "throughput, \(senders) senders, \(backend)",
            expectedState: sent,
            finalState: loop.state,
            expectedReduced: sent,
            statistics: loop.statistics
        ).validate()
    }

    /// The limit: the same additions with no loop around them; with several senders, the best of
    /// ``locked(events:senders:)``, ``combining(events:senders:pause:)`` (`callback`'s shape),
    /// unpaced and paced by each of ``drainPauses``, and ``consumer(events:senders:)`` (`actor`'s
    /// and `stream`'s).
    static func bare(events: Int, senders: Int) async -> Double {
        if senders == 1 { return await locked(events: events, senders: 1) }
        var best = await locked(events: events, senders: senders)
        best = Swift.min(best, await combining(events: events, senders: senders))
        for pause in drainPauses {
            best = Swift.min(best, await combining(events: events, senders: senders, pause: pause))
        }
        return Swift.min(best, await consumer(events: events, senders: senders))
    }

    /// The pauses (nanoseconds) of the paced combining queues (see ``CombiningReducer``): which
    /// one is best depends on how the threads share the cores, so the limit tries both.
    static let drainPauses: [UInt64] = [2_000, 16_000]

    /// The same additions in a plain loop (1 sender), or behind one lock taken per event.
    static func locked(events: Int, senders: Int) async -> Double {
        let reduce = opaque(Systems.add)
        if senders == 1 {
            let elapsed = await onDedicatedThread { () -> UInt64 in
                var state = 0
                let elapsed = Nanoseconds.measure {
                    for _ in 0..<events { reduce(&state, 1) }
                }
                precondition(opaque(state) == events)
                return elapsed
            }
            return Double(elapsed) / Double(events)
        }
        // The core's `Lock`: `Synchronization.Mutex` in release builds, a pthread mutex under
        // `-DTSAN`, where ThreadSanitizer reports false races inside a contended `Mutex`.
        let state = Lock(0)
        let shares = split(events, into: senders)
        let elapsed = await Nanoseconds.measure {
            await onDedicatedThreads(senders) { sender in
                for _ in 0..<shares[sender] { state.withLock { reduce(&$0, 1) } }
            }
        }
        return Double(elapsed) / Double(events)
    }

    /// The same additions through a ``ConsumerReducer``: `senders` threads and the consumer's,
    /// timed until the consumer has reduced every event.
    static func consumer(events: Int, senders: Int) async -> Double {
        let reducer = ConsumerReducer(reduce: opaque(Systems.add))
        let shares = split(events, into: senders)
        let elapsed = await Nanoseconds.measure {
            await onDedicatedThreads(senders + 1) { thread in
                if thread == senders {
                    reducer.consume(events: events)
                } else {
                    for _ in 0..<shares[thread] { reducer.send(1) }
                }
            }
        }
        precondition(reducer.state == events, "consumer limit: \(reducer.state) of \(events) events reduced")
        return Double(elapsed) / Double(events)
    }

    /// The same additions through a ``CombiningReducer`` whose drainer waits `pause` nanoseconds
    /// after a small batch.
    static func combining(events: Int, senders: Int, pause: UInt64 = 0) async -> Double {
        let reducer = CombiningReducer(reduce: opaque(Systems.add), pause: pause)
        let shares = split(events, into: senders)
        let elapsed = await Nanoseconds.measure {
            await onDedicatedThreads(senders) { sender in
                for _ in 0..<shares[sender] { reducer.send(1) }
            }
        }
        precondition(reducer.state == events, "combining limit: \(reducer.state) of \(events) events reduced")
        return Double(elapsed) / Double(events)
    }

    static func split(_ total: Int, into parts: Int) -> [Int] {
        (0..<parts).map { total / parts + ($0 < total % parts ? 1 : 0) }
    }
}

/// What the hand-written queues of the limit share: their queue behind the core's lock, and the
/// state with its reducer in an object of its own, away from the lock (see ``CombiningReducer``).
class LockedQueueReducer<Queue>: @unchecked Sendable {
    // @unchecked: `owner.state` is touched by one thread at a time, which each subclass says; the
    // lock orders one thread's writes before the next one's reads.
    let queue: InlineLock<Queue>
    let owner: ReducedState

    init(_ queue: sending Queue, reduce: @escaping @Sendable (inout Int, Int) -> Void) {
        self.queue = InlineLock(queue)
        owner = ReducedState(reduce: reduce)
    }

    /// The state; read only once every thread has returned.
    final var state: Int {
        queue.withLock { _ in owner.state }
    }
}

/// A reducer shared by several threads, written by hand: a sender that finds nobody reducing
/// becomes the reducer and, outside the lock, reduces its event and then every batch the others
/// queued meanwhile; a sender that finds someone reducing only appends its event under the lock.
/// Contended, the lock is held for an append instead of a reduction, and one thread reduces while
/// the others keep sending. `callback`'s drain with nothing of a loop: a batch is taken by swapping
/// buffers under the lock and reduced outside it.
///
/// The state is kept apart from the lock, as the engine keeps its state's owner apart from its
/// lock: the senders write the lock's word and the queue's buffer on every append, and a drainer
/// writing the state in the same object (48 bytes further on), once per reduction, would share
/// that cache line (or its prefetched pair) with them. Each batch is reduced into a local copy,
/// stored back once per batch.
///
/// With a `pause`, a drainer whose last batch was small (fewer than ``smallBatch`` events) spins
/// that long on the clock, touching nothing shared, before it takes the lock for the next batch.
/// A drainer that reduces faster than the senders append otherwise takes the lock for every event
/// or two: the lock's cache line then moves between the cores on every append, and the senders pay
/// that move each time. Paced, the batches grow and a sender appends to a line its core already
/// holds. `callback`'s drain does more between two batches (it publishes the state and its counts),
/// which spaces its lock takes the same way.
final class CombiningReducer: LockedQueueReducer<CombiningQueue>, @unchecked Sendable {
    // @unchecked: `owner.state` is touched only by the thread that set `queue.draining` under the
    // lock, until it clears it under the lock.
    static let smallBatch = 16

    let pause: UInt64

    /// `pause`: nanoseconds a drainer waits after a small batch; 0 takes the next one at once.
    init(reduce: @escaping @Sendable (inout Int, Int) -> Void, pause: UInt64 = 0) {
        self.pause = pause
        super.init(CombiningQueue(), reduce: reduce)
    }

    func send(_ event: Int) {
        var batch: [Int] = []
        let drain = queue.withLock { queue -> Bool in
            if queue.draining {
                queue.events.append(event)
                return false
            }
            queue.draining = true
            swap(&queue.spare, &batch)
            return true
        }
        guard drain else { return }
        let owner = self.owner, reduce = owner.reduce, pause = self.pause
        var state = owner.state
        reduce(&state, event)
        while true {
            batch.removeAll(keepingCapacity: true)
            owner.state = state
            let more = queue.withLock { queue -> Bool in
                if queue.events.isEmpty {
                    queue.draining = false
                    swap(&queue.spare, &batch)
                    return false
                }
                swap(&queue.events, &batch)
                return true
            }
            guard more else { return }
            for event in batch { reduce(&state, event) }
            if pause > 0 && batch.count < Self.smallBatch { Nanoseconds.spin(until: Nanoseconds.now() &+ pause) }
        }
    }
}

/// ``CombiningReducer``'s queue.
struct CombiningQueue {
    var draining = false
    var events: [Int] = []
    /// The drainer's emptied batch between drains, so that no drain allocates.
    var spare: [Int] = []
}

/// A reducer fed by several threads and drained by one consumer thread of its own, written by
/// hand: the senders only append under the lock (and wake the consumer when it parked on an empty
/// queue); the consumer takes each batch by swapping buffers and reduces it outside the lock.
/// The shape of `actor` and `stream`, whose senders never reduce: their drain runs on the pool.
final class ConsumerReducer: LockedQueueReducer<ConsumerQueue>, @unchecked Sendable {
    // @unchecked: `owner.state` is touched only by the consumer thread.
    private let wake = DispatchSemaphore(value: 0)

    init(reduce: @escaping @Sendable (inout Int, Int) -> Void) {
        super.init(ConsumerQueue(), reduce: reduce)
    }

    func send(_ event: Int) {
        let wakeConsumer = queue.withLock { queue -> Bool in
            queue.events.append(event)
            guard queue.consumerParked else { return false }
            queue.consumerParked = false
            return true
        }
        if wakeConsumer { wake.signal() }
    }

    /// The consumer: reduces until `events` events have been, parking whenever the queue is empty.
    func consume(events: Int) {
        let reduce = owner.reduce
        var state = owner.state
        var batch: [Int] = []
        var reduced = 0
        while reduced < events {
            batch.removeAll(keepingCapacity: true)
            let taken = queue.withLock { queue -> Bool in
                if queue.events.isEmpty {
                    queue.consumerParked = true
                    return false
                }
                swap(&queue.events, &batch)
                return true
            }
            guard taken else {
                wake.wait()
                continue
            }
            for event in batch { reduce(&state, event) }
            reduced += batch.count
        }
        owner.state = state
    }
}

/// ``ConsumerReducer``'s queue.
struct ConsumerQueue {
    var events: [Int] = []
    var consumerParked = false
}

/// A limit's state and reducer, in an object of their own, away from the lock (see
/// ``CombiningReducer``).
final class ReducedState {
    var state = 0
    let reduce: @Sendable (inout Int, Int) -> Void

    init(reduce: @escaping @Sendable (inout Int, Int) -> Void) {
        self.reduce = reduce
    }
}
