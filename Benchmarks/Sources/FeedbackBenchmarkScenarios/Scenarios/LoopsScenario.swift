import FeedbackLoop
import Synchronization

/// `loops`: many idle loops alive at once — a server with a loop per connection or per entity.
/// Bytes of resident memory per loop (RSS after creating them all and letting each start, minus
/// before), time to create one, and time to stop one.
///
/// Limit: the least a loop could be, an object holding its state behind a `Mutex` and its reducer.
public struct LoopsScenario: Sendable {
    public let size: BenchmarkSize

    public init(size: BenchmarkSize) { self.size = size }

    public func run(backends: [Backend], peer: Bool = false, progress: Progress) async throws -> ScenarioReport {
        let count = size.idleLoops
        let label = "\(count) idle loops"
        var report = ScenarioReport(scenario: .loops, limit: "object with a Mutex'd state and a reducer")
        progress("loops: limit")
        let bare = Self.bare(count: count)
        report.recordLimit(label, "bytes/loop", .lower, value: bare.bytesPerLoop)
        report.recordLimit(label, "create ns/loop", .lower, value: bare.createNanoseconds)
        report.recordLimit(label, "stop ns/loop", .lower, value: bare.stopNanoseconds)
        for backend in backends {
            try await report.measure(backend) { report in
                progress("loops: \(count) on \(backend)")
                let result = try await Self.measure(backend, count: count)
                report.record(label, "bytes/loop", .lower, backend: backend.rawValue, value: result.bytesPerLoop)
                report.record(label, "create ns/loop", .lower, backend: backend.rawValue, value: result.createNanoseconds)
                report.record(label, "stop ns/loop", .lower, backend: backend.rawValue, value: result.stopNanoseconds)
            }
        }
        if peer {
            try await report.measurePeer { report in
                progress("loops: \(count) on \(PeerSystems.name)")
                let result = try Self.measurePeer(count: count)
                report.record(label, "bytes/loop", .lower, backend: PeerSystems.name, value: result.bytesPerLoop)
                report.record(label, "create ns/loop", .lower, backend: PeerSystems.name, value: result.createNanoseconds)
                report.record(label, "stop ns/loop", .lower, backend: PeerSystems.name, value: result.stopNanoseconds)
            }
        }
        return report
    }

    public struct Result: Sendable {
        public var bytesPerLoop: Double
        public var createNanoseconds: Double
        public var stopNanoseconds: Double
    }

    /// Creates `count` idle loops, waits until each has started, measures, then stops them all.
    public static func measure(_ backend: Backend, count: Int) async throws -> Result {
        var loops: [Loop<Int, Int>] = []
        loops.reserveCapacity(count)
        ResidentMemory.trim()
        let before = ResidentMemory.bytes()
        let created = Nanoseconds.measure {
            for _ in 0..<count { loops.append(Systems.idleCounter(backend)) }
        }
        for loop in loops { await loop.waitUntilIdle() }
        let after = ResidentMemory.bytes()
        for (index, loop) in loops.enumerated() {
            try RunCheck(
                run: "loops, \(backend), loop \(index)", expectedState: 0, finalState: loop.state, expectedReduced: 0,
                statistics: loop.statistics, expectedStarted: 0
            ).validate()
        }
        let stopped = await Nanoseconds.measure {
            for loop in loops { await loop.stop() }
        }
        loops.removeAll()
        return Result(
            bytesPerLoop: Double(after - before) / Double(count),
            createNanoseconds: Double(created) / Double(count),
            stopNanoseconds: Double(stopped) / Double(count))
    }

    /// `count` idle peer systems, each subscribed (so its feedback has seen the initial state).
    public static func measurePeer(count: Int) throws -> Result {
        var loops: [PeerSystems.Loop<Int, Int>] = []
        loops.reserveCapacity(count)
        ResidentMemory.trim()
        let before = ResidentMemory.bytes()
        let created = Nanoseconds.measure {
            for _ in 0..<count { loops.append(PeerSystems.idleCounter()) }
        }
        let after = ResidentMemory.bytes()
        for (index, loop) in loops.enumerated() {
            try PeerCheck(run: "loops, \(PeerSystems.name), loop \(index)", expectedState: 0, finalState: loop.state, reduced: loop.reduced)
                .validate()
        }
        let stopped = Nanoseconds.measure {
            for loop in loops { loop.stop() }
        }
        loops.removeAll()
        return Result(
            bytesPerLoop: Double(after - before) / Double(count),
            createNanoseconds: Double(created) / Double(count),
            stopNanoseconds: Double(stopped) / Double(count))
    }

    /// The limit's object.
    final class BareLoop: Sendable {
        let state = Mutex(0)
        let reduce: @Sendable (inout Int, Int) -> Void

        init(reduce: @escaping @Sendable (inout Int, Int) -> Void) { self.reduce = reduce }
    }

    static func bare(count: Int) -> Result {
        var loops: [BareLoop] = []
        loops.reserveCapacity(count)
        ResidentMemory.trim()
        let before = ResidentMemory.bytes()
        let reduce = opaque(Systems.add)
        let created = Nanoseconds.measure {
            for _ in 0..<count { loops.append(BareLoop(reduce: reduce)) }
        }
        let after = ResidentMemory.bytes()
        let stopped = Nanoseconds.measure { loops.removeAll() }
        return Result(
            bytesPerLoop: Double(after - before) / Double(count),
            createNanoseconds: Double(created) / Double(count),
            stopNanoseconds: Double(stopped) / Double(count))
    }
}
