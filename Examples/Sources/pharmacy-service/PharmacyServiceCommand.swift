import ArgumentParser
import FeedbackExamples
import FeedbackLoop
import FeedbackLoopServices
import Logging
import NIOPosix
import OTel
import PharmacyServer
import ServiceLifecycle
import Tracing

/// `pharmacy-service`: the pharmacies example as an HTTP server on 127.0.0.1.
///
/// Malformed or out-of-range flags, or a malformed `PHARMACY_SERVICE_PORT`, print the usage and
/// exit with 64.
@main
struct PharmacyServiceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pharmacy-service",
        abstract: "Serves the pharmacies example over HTTP on 127.0.0.1, one FeedbackLoop per session.",
        discussion: """
            SIGTERM or SIGINT shut it down gracefully: the server stops accepting connections and \
            every session stops taking events at once; requests waiting on a session are answered \
            (503 shutting_down if it was cut short) once it has drained, which takes the grace \
            period at most. If cancelled effects or requests still hold it \(Self.shutdownMargin) \
            seconds after that, the remaining work is cancelled, and \(Self.shutdownMargin) seconds \
            later still the process ends with a crash report rather than hang.

            Traces: with any of \(Self.tracingVariables.joined(separator: ", ")) set, each request \
            is traced (its span, the session loop's reduce and effect spans, the back-end call) and \
            exported with OpenTelemetry's OTLP/HTTP exporter, configured by the usual OTEL_* \
            variables (OTEL_SERVICE_NAME defaults to pharmacy-service). With none set, no span is made.
            """)

    @Option(parsing: .unconditional, help: "The port on 127.0.0.1; 0 picks a free one. Default: $PHARMACY_SERVICE_PORT, else 8080.")
    var port: Int?

    @Option(help: "The loop backend: \(Backend.allCases.map(\.rawValue).joined(separator: ", ")).")
    var backend: Backend = .callback

    @Flag(
        help: """
            With --backend actor: run each session's loop on one of the server's own event loops \
            (chosen by session id) instead of the Swift concurrency pool, so its work never hops threads.
            """)
    var pinSessions = false

    @Option(parsing: .unconditional, help: "Seconds a graceful shutdown (or an expiry) waits for a session's effects, 0 to 3600.")
    var gracePeriod: Double = 10

    @Option(parsing: .unconditional, help: "Milliseconds the fake pharmacies back end takes per call, 0 to 3600000.")
    var latencyMs: Int = 100

    @Option(parsing: .unconditional, help: "How many sessions may be open at once, 1 to 1000000.")
    var maximumSessions: Int = 10_000

    @Option(parsing: .unconditional, help: "Seconds without a request after which a session expires, 1 to 604800; 0 never expires.")
    var sessionIdleTimeout: Double = 1800

    @Option(
        parsing: .unconditional,
        help: """
            How many connections are served at once, 1 to the open-file limit less \(Self.reservedFiles). \
            Default: 4096, or that limit if lower. Past it, up to \(Self.excessConnections) more (as the \
            open-file limit allows) may each send one GET /health within a second, and any further \
            connection is closed at once.
            """)
    var maximumConnections: Int?

    @Option(parsing: .unconditional, help: "Seconds a connection may stay without a complete request part before it is closed, 0.1 to 3600.")
    var idleTimeout: Double = 15

    @Option(parsing: .unconditional, help: "Seconds a request's body may take to arrive after its head, 0.1 to 3600.")
    var readTimeout: Double = 10

    @Option(
        help: """
            Journal every session in this SQLite file (created if missing): each event is committed \
            before it acts and before its request is answered, and sessions survive a restart or a \
            crash of the process. Without --journal or --journal-postgres sessions live in memory only.
            """)
    var journal: String?

    @Option(
        help: """
            Journal every session in this PostgreSQL database (postgres://user[:password]@host[:port]/database, \
            no TLS), which other servers may share: each session is owned by one server at a time, \
            through a lease.
            """)
    var journalPostgres: String?

    @Option(help: "With --journal-postgres: this server's name in session leases, unique among the servers sharing the database. Default: pharmacy-service-<pid>.")
    var node: String?

    @Option(
        parsing: .unconditional,
        help: """
            With --journal-postgres: seconds a session's lease lasts unless renewed (every third of it), 0.1 to 3600; \
            another server can take a session over this long after its owner stopped renewing. Default: 10.
            """)
    var leaseDuration: Double?

    static let portVariable = "PHARMACY_SERVICE_PORT"
    /// Connections past the cap kept for health checks (see `PharmacyServer.Limits`), at most.
    static let excessConnections = 1024
    /// Files kept for everything but client connections (listener, logs, the event loops).
    static let reservedFiles = 64
    /// Seconds past the grace period before a stuck shutdown is escalated.
    static let shutdownMargin = 5

    func validate() throws {
        _ = try resolvedPort()
        if pinSessions && backend != .actor {
            throw ValidationError("--pin-sessions needs --backend actor: a callback loop runs on the thread that sends to it")
        }
        try Self.check(gracePeriod, in: 0...3600, "--grace-period")
        try Self.check(latencyMs, in: 0...3_600_000, "--latency-ms")
        try Self.check(maximumSessions, in: 1...1_000_000, "--maximum-sessions")
        if sessionIdleTimeout != 0 { try Self.check(sessionIdleTimeout, in: 1...604_800, "--session-idle-timeout") }
        try Self.check(idleTimeout, in: 0.1...3600, "--idle-timeout")
        try Self.check(readTimeout, in: 0.1...3600, "--read-timeout")
        if journal != nil && journalPostgres != nil {
            throw ValidationError("--journal and --journal-postgres exclude each other: a session has one journal")
        }
        if journal?.isEmpty == true { throw ValidationError("--journal needs a file path") }
        if journalPostgres == nil && (node != nil || leaseDuration != nil) {
            throw ValidationError("--node and --lease-duration need --journal-postgres")
        }
        if let node, node.isEmpty || node.utf8.count > 200 { throw ValidationError("--node must be 1 to 200 bytes") }
        if let leaseDuration { try Self.check(leaseDuration, in: 0.1...3600, "--lease-duration") }
        if let maximumConnections {
            let files = Self.raiseOpenFileLimit()
            let limit = files - Self.reservedFiles
            guard limit >= 1 else { throw ValidationError("the open-file limit (\(files)) is too low to serve") }
            try Self.check(maximumConnections, in: 1...limit, "--maximum-connections")
        }
    }

    private static func check<Number: Comparable>(_ value: Number, in range: ClosedRange<Number>, _ flag: String) throws {
        // NaN fails `contains`, so it is rejected with the rest.
        guard range.contains(value) else {
            throw ValidationError("\(flag) must be from \(range.lowerBound) to \(range.upperBound), not \(value)")
        }
    }

    private func resolvedPort() throws -> Int {
        let port: Int
        if let flag = self.port {
            port = flag
        } else if let variable = Environment.value(Self.portVariable) {
            guard let value = Int(variable) else {
                throw ValidationError("\(Self.portVariable) must be a port number, not '\(variable)'")
            }
            port = value
        } else {
            port = 8080
        }
        guard (0...65535).contains(port) else { throw ValidationError("the port must be between 0 and 65535") }
        return port
    }

    /// Seconds (already range-checked) as a `Duration`, to the millisecond.
    private static func duration(seconds: Double) -> Duration {
        .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// The variables that turn tracing on; OpenTelemetry's exporter reads every `OTEL_*` one.
    static let tracingVariables = [
        "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER", "OTEL_SERVICE_NAME",
    ]

    /// swift-otel's tracer, bootstrapped as the process's, and the service that exports its spans
    /// (to run beside the server, so that it flushes on shutdown); `nil` when no tracing variable
    /// is set. Logs and metrics stay where they are: only traces go to OpenTelemetry.
    static func bootstrapTracing() throws -> (tracer: any Tracer, exporter: any Service)? {
        guard tracingVariables.contains(where: { Environment.value($0) != nil }) else { return nil }
        var configuration = OTel.Configuration.default
        configuration.serviceName = "pharmacy-service"
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        let exporter = try OTel.bootstrap(configuration: configuration)
        return (InstrumentationSystem.tracer, exporter)
    }

    func run() async throws {
        let logger = Logger(label: "pharmacy-service")
        let tracing = try Self.bootstrapTracing()
        let latency = Duration.milliseconds(latencyMs)
        let fileLimit = Self.raiseOpenFileLimit()
        let connections = maximumConnections ?? min(4096, max(1, fileLimit - Self.reservedFiles))
        // The file table holds the cap's connections and these too.
        let excess = min(Self.excessConnections, max(0, fileLimit - Self.reservedFiles - connections))
        let grace = Self.duration(seconds: gracePeriod)
        let sessionJournal: SessionJournal?
        do {
            if let journal {
                sessionJournal = try .sqlite(path: journal)
            } else if let journalPostgres {
                sessionJournal = try .postgres(
                    url: journalPostgres, node: node ?? "pharmacy-service-\(getpid())",
                    leaseDuration: Self.duration(seconds: leaseDuration ?? 10), logger: logger)
            } else {
                sessionJournal = nil
            }
        } catch {
            throw ValidationError("the journal cannot be opened: \(error)")
        }
        let server = PharmacyServer(
            configuration: .init(
                port: try resolvedPort(),
                sessions: .init(
                    backend: backend,
                    eventLoops: pinSessions ? MultiThreadedEventLoopGroup.singleton : nil,
                    gracePeriod: grace,
                    maximumSessions: maximumSessions,
                    idleTimeout: sessionIdleTimeout == 0 ? nil : Self.duration(seconds: sessionIdleTimeout),
                    makeService: { _ in FakePharmaciesService(saved: FakePharmaciesService.sampleSaved, latency: latency) },
                    onSessionEnded: { id, report in
                        logger.info(
                            "session ended",
                            metadata: [
                                "session": "\(id)", "ending": "\(report.ending)", "state": "\(report.finalState)",
                            ])
                    },
                    metrics: LoopMetrics(label: "pharmacies"),
                    registryMetrics: LoopRegistryMetrics(label: "pharmacy_sessions"),
                    logger: logger,
                    journal: sessionJournal,
                    tracer: tracing?.tracer),
                limits: .init(
                    maximumConnections: connections,
                    excessConnections: excess,
                    idleTimeout: Self.duration(seconds: idleTimeout),
                    readTimeout: Self.duration(seconds: readTimeout)),
                logger: logger),
            onListening: { port in
                // On stdout, so that scripts that passed --port 0 can read the port.
                print("listening on http://\(PharmacyServer.host):\(port)")
                fflush(nil)  // every stream; avoids touching the `stdout` global
            })
        // The exporter first: a group shuts its services down in reverse order, so the server's
        // last spans are exported before it stops.
        let services: [any Service] = (tracing.map { [$0.exporter] } ?? []) + [server]
        var group = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // The backstop for effects or requests that ignore cancellation: the shutdown itself is
        // bounded by the grace period (see PharmacyServer).
        group.maximumGracefulShutdownDuration = grace + .seconds(Self.shutdownMargin)
        group.maximumCancellationDuration = .seconds(Self.shutdownMargin)
        try await ServiceGroup(configuration: group).run()
    }

    /// Raises the soft limit on open files to the hard limit, as servers do, so that the
    /// connection cap rather than the file table decides; returns the soft limit in force.
    static func raiseOpenFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }
}

extension Backend: @retroactive ExpressibleByArgument {}

/// The process environment, without Foundation.
enum Environment {
    static func value(_ name: String) -> String? {
        guard let pointer = getenv(name) else { return nil }
        return String(cString: pointer)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
