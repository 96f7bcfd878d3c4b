import Dispatch
import FeedbackLoop

// The `service` shape on the actor loops' own executor (`LoopConfiguration.executor`), for
// `Loop.send(_:isolation:)`: the sender is an actor on that executor, as an actor on a SwiftNIO
// event loop shares it with the connections' loops. Counted by callgrind only (the workloads
// `service-executor` and `service-executor-hop`).

extension ServiceScenario {
    /// ``sessions`` idle `actor` loops on one executor; one sender on the same executor sends
    /// `events` round robin, each once the previous one was observed. `inPlace`: `send` takes the
    /// sender's isolation, and an idle loop reduces the event in the call; otherwise the sender
    /// passes none, as a caller anywhere else, and each event wakes its loop with a task whose job
    /// waits for the executor.
    public static func closedLoopOnExecutor(events: Int, inPlace: Bool) async throws {
        let executor = BenchmarkExecutor()
        let sender = SenderOnExecutor(executor)
        let loops = (0..<sessions).map { _ in
            Loop(initial: 0, reduce: Systems.add, backend: .actor, configuration: LoopConfiguration(executor: executor))
        }
        // Every loop's observer runs on the executor, where the sender is isolated.
        let observations = loops.map { loop in
            loop.observe { count in
                if count > 0 { sender.assumeIsolated { $0.observed() } }
            }
        }
        for loop in loops { await loop.waitUntilIdle() }
        await sender.send(events, into: loops, inPlace: inPlace)
        let what = "service on the loops' executor, \(inPlace ? "in place" : "a task per wake-up")"
        for (index, loop) in loops.enumerated() {
            await loop.waitUntilIdle()
            let sent = share(of: index, events: events, units: loops.count)
            try RunCheck(
                run: "\(what), loop \(index)", expectedState: sent, finalState: loop.state, expectedReduced: sent,
                statistics: loop.statistics, expectedStarted: 0
            ).validate()
        }
        guard await sender.seen == events else { throw ScenarioFailure("\(what): \(await sender.seen) events observed, \(events) sent") }
        for observation in observations { observation.cancel() }
        for loop in loops { await loop.stop() }
    }
}

/// A serial executor of the benchmark's own, as a server brings one: jobs run one at a time on a
/// dispatch queue.
final class BenchmarkExecutor: SerialExecutor, @unchecked Sendable {
    // @unchecked: the only state is the serial queue.
    private let queue = DispatchQueue(label: "feedback-bench.executor")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }
}

/// The sender: isolated to an actor on the loops' executor. It waits for each event's
/// observation on its executor, so that a loop woken by a task gets the executor meanwhile.
actor SenderOnExecutor {
    let executor: BenchmarkExecutor
    private(set) var seen = 0
    private var waiting: UnsafeContinuation<Void, Never>?

    init(_ executor: BenchmarkExecutor) {
        self.executor = executor
    }

    nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    func send(_ events: Int, into loops: [Loop<Int, Int>], inPlace: Bool) async {
        for index in 0..<events {
            let loop = loops[index % loops.count]
            if inPlace {
                loop.send(1)
            } else {
                loop.send(1, isolation: nil)
            }
            if seen <= index {
                // Unsafe: resumed exactly once, by `observed()`, which takes it.
                await withUnsafeContinuation { waiting = $0 }
            }
        }
    }

    /// A loop reduced one more event; called from its observer, on the executor.
    func observed() {
        seen += 1
        waiting?.resume()
        waiting = nil
    }
}
