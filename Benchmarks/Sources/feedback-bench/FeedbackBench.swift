import ArgumentParser
import FeedbackBenchmarkScenarios
import Dispatch
import FeedbackLoop
import Foundation
import Instrumentation

/// `feedback-bench`: every scenario on every backend, side by side with the bare limit measured in
/// the same run.
///
/// A synchronous command whose `run()` blocks the main thread on the asynchronous work, rather than
/// an `AsyncParsableCommand`: an async `main` parks the main thread in `dispatch_main`, which makes
/// valgrind 3.19 (callgrind) crash, and `Benchmarks/scripts/callgrind.sh` runs this executable under it.
@main
struct FeedbackBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feedback-bench",
        abstract: "Benchmarks FeedbackLoop's backends against the bare limit of the same work.",
        discussion: """
            With no arguments, runs every scenario on every backend (about a minute on 2 cores) and \
            prints one table per scenario: the limit (a bare reducer loop, or the bare Swift primitive \
            for the asynchronous scenarios), each backend's figure and its ratio to the limit. Every run \
            checks its result and exits 1 instead of printing figures from a broken run.

            Scenarios: \(Scenario.defaultCases.map(\.rawValue).joined(separator: ", ")), and scaling (only when \
            named: --scenario scaling, with --loops). --loops also sets service's largest population.
            """)

    @Option(help: "callback, actor, stream, opencombine (the peer) or all.")
    var backend = "all"

    @Option(name: .customLong("scenario"), help: "A scenario to run (repeatable; default all).")
    var scenarioNames: [String] = []

    // `.unconditional`: `--events -1` must reach the range check below, not be taken for a flag.
    @Option(
        parsing: .unconditional,
        help: "External sends per throughput run (1 to 100,000,000); every other count scales from it. Overrides --size.")
    var events: Int?

    @Option(
        parsing: .unconditional,
        help: """
            With --scenario scaling or service: the most live loops (1 to 1,000,000; default 100,000); \
            service also spreads its open loop over at most this many.
            """)
    var loops: Int?

    @Option(
        parsing: .unconditional,
        help: "With --scenario durable: events journaled before the recovery runs (100 to 10,000,000; default a tenth of --events, at most 100,000).")
    var recoveryEvents: Int?

    @Option(help: """
        Not here: feedback-bench does not link PostgreSQL. The durable scenario on PostgreSQL is \
        feedback-bench-postgres, in this package; giving this flag \
        prints the command to run.
        """)
    var postgresUrl: String?

    @Option(help: "small, medium or large (default medium: 1,000,000 events).")
    var size: String?

    @Option(help: "table, json or csv.")
    var format = "table"

    @Option(help: """
        system or jemalloc: jemalloc re-runs the command with Debian's libjemalloc.so.2 preloaded \
        (install libjemalloc-dev); the report records the allocator.
        """)
    var allocator = "system"

    @Option(help: """
        Write the report to this file (- for standard output). A regular file is replaced atomically; \
        a link, FIFO or device is written through. Checked before the run starts.
        """)
    var output: String?

    @Option(help: """
        Print a report saved with --format json in --format's format, instead of running anything; \
        --backend and --scenario select from it.
        """)
    var render: String?

    @Flag(help: """
        Run one workload once, untimed and checked, for valgrind callgrind: --workload, or the \
        --scenario's (throughput: W1, pingpong: W2, cancellation: W3, composition: keyed-children, \
        loops: loops, service: service); --events sets the units.
        """)
    var instructions = false

    @Option(help: """
        With --instructions: w1, w2, w3, w3-callback (W3 with a .callback effect), child (an event \
        into a child feature's own loop), keyed-children (into 1,000 keyed children of it), plain-array \
        (into the same 1,000 children in a plain array, no composition), loops \
        (create, start, stop and release an idle loop), service (an event into one of 1,000 idle \
        loops, sent once the previous one was observed) or service-actor (its second limit, --bare only: \
        a bare actor entered by a new Task per event).
        """)
    var workload: String?

    @Flag(help: "With --instructions: run the bare limit instead of a backend.")
    var bare = false

    @Flag(help: """
        With --instructions: bootstrap InstrumentationSystem with an instrument that does nothing, so \
        that every loop propagates ServiceContext (ServiceContextPropagation.automatic) as in a service \
        with a tracer, while the workload sends in no context: what propagation itself costs (issue 30).
        """)
    var propagateContext = false

    mutating func validate() throws {
        _ = try options()
    }

    /// The parsed, checked options.
    struct Options: Sendable {
        var backends: [Backend]
        /// Whether the peer runs (`--backend all` or `opencombine`).
        var peer: Bool
        var scenarios: [Scenario]
        var size: BenchmarkSize
        var format: ReportFormat
        var workload: Workload?
        /// Who runs `workload`.
        var contender: Contender?
        var render: String?
        var allocator: Allocator
        var scalingLoops: Int
        /// `--loops` for `service`; `nil`: its default for the size.
        var serviceLoops: Int?
        /// The backends and scenarios `--render` keeps; `nil` keeps all the report holds.
        var renderBackends: [String]?
        var renderScenarios: [Scenario]?
        var destination: ReportDestination
        var durableRecoveryEvents: Int? = nil
    }

    func options() throws -> Options {
        if let postgresUrl {
            // postgres-nio (and swift-nio under it) would add minutes to every build of this
            // executable, so the PostgreSQL store's benchmark is an executable of its own.
            let quoted = "'" + postgresUrl.replacingOccurrences(of: "'", with: "'\\''") + "'"
            throw ValidationError("""
                feedback-bench cannot measure PostgreSQL (it does not link postgres-nio); from the repository's root, run \
                `swift run -c release --package-path Benchmarks --traits Postgres feedback-bench-postgres --postgres-url \(quoted)` \
                (it takes the same --backend, --events, --size, --recovery-events and --format), or \
                `.ci/postgres.sh swift run -c release --package-path Benchmarks --traits Postgres feedback-bench-postgres` \
                for a throwaway server on loopback
                """)
        }
        let backends: [Backend]
        let peer: Bool
        if backend == "all" {
            (backends, peer) = (Backend.allCases, true)
        } else if backend == PeerSystems.name {
            (backends, peer) = ([], true)
        } else if let one = Backend(rawValue: backend) {
            (backends, peer) = ([one], false)
        } else {
            let names = Backend.allCases.map(\.rawValue) + [PeerSystems.name]
            throw ValidationError("unknown backend '\(backend)'; use \(names.joined(separator: ", ")) or all")
        }
        var scenarios: [Scenario] = []
        for name in scenarioNames {
            guard let scenario = Scenario(rawValue: name) else {
                throw ValidationError("unknown scenario '\(name)'; use one of \(Scenario.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if !scenarios.contains(scenario) { scenarios.append(scenario) }
        }
        if scenarios.isEmpty { scenarios = Scenario.defaultCases }
        let benchmarkSize: BenchmarkSize
        do {
            benchmarkSize = try BenchmarkSize(events: events, size: size)
        } catch {
            throw ValidationError(error.description)
        }
        guard let reportFormat = ReportFormat(rawValue: format) else {
            throw ValidationError("unknown format '\(format)'; use table, json or csv")
        }
        if let output, output.isEmpty { throw ValidationError("--output needs a file name (or - for standard output)") }
        var workload: Workload?
        var contender: Contender?
        if instructions {
            if let name = self.workload {
                guard let named = Workload(rawValue: name) else {
                    throw ValidationError("unknown workload '\(name)'; use \(Workload.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                guard scenarioNames.isEmpty else { throw ValidationError("give either --workload or --scenario, not both") }
                workload = named
            } else {
                guard scenarios.count == 1, let only = Workload(scenario: scenarios[0]) else {
                    throw ValidationError("--instructions needs --workload or exactly one --scenario: throughput, pingpong, cancellation, composition, loops or service")
                }
                workload = only
            }
            if bare {
                guard backend == "all" else { throw ValidationError("give either --bare or --backend, not both") }
                contender = .bare
            } else if backends.count == 1, !peer {
                contender = .backend(backends[0])
            } else if backends.isEmpty, peer {
                contender = .peer
            } else {
                throw ValidationError("--instructions needs one --backend (\(Backend.allCases.map(\.rawValue).joined(separator: ", ")) or \(PeerSystems.name)) or --bare")
            }
            if contender == .peer, let workload, !workload.hasPeer {
                throw ValidationError("\(PeerSystems.name) does not run workload \(workload.rawValue): it runs on a backend or --bare")
            }
            if let workload, !workload.runsOnBackends, contender != .bare {
                throw ValidationError("workload \(workload.rawValue) is a bare limit: run it with --bare")
            }
        } else if bare {
            throw ValidationError("--bare only goes with --instructions")
        } else if propagateContext {
            throw ValidationError("--propagate-context only goes with --instructions")
        } else if self.workload != nil {
            throw ValidationError("--workload only goes with --instructions")
        }
        if let render, render.isEmpty { throw ValidationError("--render needs a file name") }
        if render != nil, instructions { throw ValidationError("--render and --instructions exclude each other") }
        if render != nil, events != nil || size != nil {
            throw ValidationError("--render prints the report's own figures; --events and --size do not apply")
        }
        if let loops {
            // Named, not implied by the default run: a default run with a different population
            // would be compared with default runs that do not say so.
            guard !scenarioNames.isEmpty, scenarios.contains(.scaling) || scenarios.contains(.service) else {
                throw ValidationError("--loops only goes with --scenario scaling or --scenario service")
            }
            guard (1...ScalingScenario.maximumLoops).contains(loops) else {
                throw ValidationError("--loops must be between 1 and \(ScalingScenario.maximumLoops), not \(loops)")
            }
        }
        if let recoveryEvents {
            guard scenarios.contains(.durable) else { throw ValidationError("--recovery-events only goes with --scenario durable") }
            guard (100...10_000_000).contains(recoveryEvents) else {
                throw ValidationError("--recovery-events must be between 100 and 10,000,000, not \(recoveryEvents)")
            }
        }
        guard let chosenAllocator = Allocator(rawValue: allocator) else {
            throw ValidationError("unknown allocator '\(allocator)'; use system or jemalloc")
        }
        if render != nil, chosenAllocator != .system {
            throw ValidationError("--render prints a saved report; --allocator does not apply")
        }
        let destination: ReportDestination
        do {
            destination = try output.map(ReportDestination.check) ?? .standardOutput
        } catch {
            throw ValidationError(error.description)
        }
        return Options(
            backends: backends, peer: peer, scenarios: scenarios, size: benchmarkSize, format: reportFormat, workload: workload,
            contender: contender, render: render, allocator: chosenAllocator,
            scalingLoops: loops ?? ScalingScenario.defaultMaxLoops, serviceLoops: loops,
            renderBackends: backend == "all" ? nil : backends.map(\.rawValue) + (peer ? [PeerSystems.name] : []),
            renderScenarios: scenarioNames.isEmpty ? nil : scenarios,
            destination: destination, durableRecoveryEvents: recoveryEvents)
    }

    func run() throws {
        let options = try options()
        if options.render == nil {
            do {
                try options.allocator.activate()
            } catch {
                FileHandle.standardError.write(Data("feedback-bench: \(error)\n".utf8))
                throw ExitCode.failure
            }
        }
        let minutes = BenchmarkSize.estimatedMinutes(events: options.size.events)
        if options.workload == nil, options.render == nil, minutes >= 10 {
            FileHandle.standardError.write(Data("feedback-bench: \(options.size.events) events: expect a run of about \(minutes) minutes\n".utf8))
        }
        if propagateContext { InstrumentationSystem.bootstrap(DoNothingInstrument()) }
        let outcome = Lock<Result<Void, any Error>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Task {
            do {
                try await Self.run(options)
                outcome.withLock { $0 = .success(()) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            finished.signal()
        }
        finished.wait()
        try outcome.withLock { $0! }.get()
    }

    static func run(_ options: Options) async throws {
        if let workload = options.workload, let contender = options.contender {
            try await runChecked { try await workload.run(contender, units: options.size.events) }
            return
        }
        let report: BenchmarkReport
        if let saved = options.render {
            do {
                report = try SavedReport.select(
                    SavedReport.read(saved), backends: options.renderBackends, scenarios: options.renderScenarios)
            } catch {
                FileHandle.standardError.write(Data("feedback-bench: \(error)\n".utf8))
                throw ExitCode.failure
            }
        } else {
            var runner = BenchmarkRunner(
                size: options.size, backends: options.backends, scenarios: options.scenarios, peer: options.peer,
                allocator: options.allocator.rawValue)
            runner.scalingLoops = options.scalingLoops
            runner.serviceLoops = options.serviceLoops
            runner.durableRecoveryEvents = options.durableRecoveryEvents
            let start = Date()
            report = try await runChecked {
                try await runner.run { line in
                    let elapsed = String(format: "%5.1f", Date().timeIntervalSince(start))
                    FileHandle.standardError.write(Data("[\(elapsed) s] \(line)\n".utf8))
                }
            }
        }
        let text = try options.format.render(report)
        do {
            try options.destination.write(text)
        } catch {
            FileHandle.standardError.write(Data("feedback-bench: \(error)\n".utf8))
            throw ExitCode.failure
        }
        let failures = report.failures
        if !failures.isEmpty {
            let lines = failures.map { "  \($0)\n" }.joined()
            FileHandle.standardError.write(Data("feedback-bench: FAILED, \(failures.count) run(s) broke their checks:\n\(lines)".utf8))
            throw ExitCode.failure
        }
    }

    /// Runs `body`; a ``ScenarioFailure`` is reported on stderr and the process exits 1.
    private static func runChecked<Result>(_ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch let failure as ScenarioFailure {
            FileHandle.standardError.write(Data("feedback-bench: FAILED, no figures reported: \(failure)\n".utf8))
            throw ExitCode.failure
        }
    }
}

/// An instrument that injects and extracts nothing: bootstrapped, it makes every loop propagate
/// `ServiceContext` (`--propagate-context`) without a tracer's own costs.
struct DoNothingInstrument: Instrument {
    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract.Carrier == Carrier {}

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {}
}
