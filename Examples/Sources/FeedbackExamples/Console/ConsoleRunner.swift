import FeedbackLoop
import Synchronization

/// Plays a ``ConsoleScenario`` line by line and writes a transcript a newcomer can read: each
/// action, each event the loop reduced (from the user or from an effect), each new state, and
/// the scenario's report of it (a route, a screen).
///
/// After each line the runner lets the line's effects play out (see
/// ``ConsoleScenario/Settling``) before it reads the next, so the transcript shows every
/// consequence next to its cause. At the end of the input it stops the loop, which cancels
/// whatever still runs, and returns.
public struct ConsoleRunner<Feature: ExampleFeature>: Sendable {
    public let scenario: ConsoleScenario<Feature>
    public let backend: Backend
    /// Longest wait for a line's effects to play out before the runner notes it and moves on.
    public var settleLimit: Duration = .seconds(5)
    private let output: @Sendable (String) -> Void

    /// A runner writing its transcript through `output`, one line per call.
    public init(scenario: ConsoleScenario<Feature>, backend: Backend, output: @escaping @Sendable (String) -> Void) {
        self.scenario = scenario
        self.backend = backend
        self.output = output
    }

    /// What a run did.
    public struct Summary: Sendable, Equatable {
        /// Lines (or `;`-separated parts of lines) rejected as unknown or malformed.
        public var rejectedActions: Int
        /// The state when the input ended.
        public var finalState: Feature.State
        public var statistics: LoopStatistics
    }

    /// Plays every line of `lines`, then stops the loop.
    public func run<Lines: AsyncSequence<String, Never>>(_ lines: Lines) async -> Summary {
        let transcript = Transcript<Feature.State, Feature.Event>(output: output, report: scenario.report)
        var loop: Loop<Feature.State, Feature.Event>?
        var rejected = 0

        // The loop starts with the first line that needs it, so that controls given before it
        // (an injected failure) affect its first effects; its opening effects play out before
        // that line runs.
        func startedLoop() async -> Loop<Feature.State, Feature.Event> {
            if let loop { return loop }
            output("[\(scenario.name) on the \(backend) backend]")
            let started = Feature.makeLoop(
                environment: scenario.environment, backend: backend,
                instrumentation: LoopInstrumentation(onTransition: transcript.transition))
            transcript.initial(started.state)
            loop = started
            await settle(started, transcript)
            return started
        }

        lineLoop: for await rawLine in lines {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
                .trimmingWhitespace()
            guard !line.isEmpty else { continue }
            output("> \(line)")
            for part in line.split(separator: ";") {
                let words = part.split(whereSeparator: \.isWhitespace).map(String.init)
                guard let verb = words.first else { continue }
                switch verb {
                case "quit":
                    break lineLoop
                case "help":
                    output(scenario.help)
                case "wait":
                    guard words.count == 2, let milliseconds = Int(words[1]), milliseconds >= 0 else {
                        rejected += 1
                        output("  ! 'wait' needs a number of milliseconds, as in 'wait 500'; type 'help' for the actions")
                        continue
                    }
                    _ = await startedLoop()
                    try? await Task.sleep(for: .milliseconds(milliseconds))
                default:
                    do {
                        switch try scenario.parse(words) {
                        case .configure(let description, let action):
                            action()
                            output("  (\(description))")
                        case .trigger(let description, let action):
                            _ = await startedLoop()
                            let before = transcript.transitions
                            action()
                            output("  (\(description))")
                            // The source's event reaches the loop asynchronously; settling starts
                            // once it has been reduced.
                            let arrived = await withTimeLimit(settleLimit) {
                                while !Task.isCancelled && transcript.transitions == before { await Task.yield() }
                            }
                            if !arrived { output("  (no event arrived within \(settleLimit))") }
                        case .send(let event):
                            _ = try? await startedLoop().sendAndWait(event)
                        }
                    } catch {
                        rejected += 1
                        output("  ! \(error); type 'help' for the actions")
                    }
                }
            }
            if let loop { await settle(loop, transcript) }
        }

        let finished = await startedLoop()
        await settle(finished, transcript)
        output("[end of input: stopping the loop]")
        await finished.stop()
        let summary = Summary(rejectedActions: rejected, finalState: finished.state, statistics: finished.statistics)
        output("[final state: \(summary.finalState)]")
        return summary
    }

    private func settle(_ loop: Loop<Feature.State, Feature.Event>, _ transcript: Transcript<Feature.State, Feature.Event>) async {
        let settled: Bool
        switch scenario.settling {
        case .immediately:
            return
        case .untilIdle:
            settled = await withTimeLimit(settleLimit) { await loop.waitUntilIdle() }
        case .untilQuiet(let quiet, let busy):
            settled = await withTimeLimit(settleLimit) {
                let clock = ContinuousClock()
                while !Task.isCancelled {
                    if clock.now - transcript.lastTransition >= quiet && !busy(transcript.lastState ?? loop.state) {
                        return
                    }
                    try? await Task.sleep(for: .milliseconds(10))
                }
            }
        }
        if !settled {
            output("  (still busy after \(settleLimit); going on)")
        }
    }
}

/// Runs `body`, giving up after `limit`. Returns whether `body` finished in time.
private func withTimeLimit(_ limit: Duration, _ body: @escaping @Sendable () async -> Void) async -> Bool {
    await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            await body()
            return true
        }
        group.addTask {
            try? await Task.sleep(for: limit)
            return false
        }
        let first = await group.next() ?? false
        group.cancelAll()
        return first
    }
}

/// Writes the transition lines of a transcript; called on the loop's drain thread or actor, one
/// transition at a time.
private final class Transcript<State: Equatable & Sendable, Event: Sendable>: Sendable {
    private let output: @Sendable (String) -> Void
    private let report: @Sendable (State?, State) -> [String]
    private let last = Mutex((at: ContinuousClock.now, state: State?.none, transitions: 0))

    init(output: @escaping @Sendable (String) -> Void, report: @escaping @Sendable (State?, State) -> [String]) {
        self.output = output
        self.report = report
    }

    /// When the last transition happened.
    var lastTransition: ContinuousClock.Instant { last.withLock { $0.at } }

    /// The state after the last transition: ahead of `Loop.state`, which is published only at
    /// the end of a batch.
    var lastState: State? { last.withLock { $0.state } }

    /// How many transitions happened.
    var transitions: Int { last.withLock { $0.transitions } }

    func initial(_ state: State) {
        output("  = \(state)")
        for line in report(nil, state) { output("    \(line)") }
    }

    @Sendable func transition(before: State, event: Event, after: State) {
        last.withLock { $0 = (.now, after, $0.transitions + 1) }
        guard after != before else {
            output("  ← \(event)   (ignored: no change)")
            return
        }
        output("  ← \(event)")
        output("  = \(after)")
        for line in report(before, after) { output("    \(line)") }
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> Substring {
        let start = firstIndex { !$0.isWhitespace } ?? endIndex
        let end = lastIndex { !$0.isWhitespace }.map(index(after:)) ?? start
        return self[start..<end]
    }
}
