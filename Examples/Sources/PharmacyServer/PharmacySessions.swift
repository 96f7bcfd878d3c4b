import FeedbackExamples
import FeedbackLoop
import FeedbackLoopServices
import FeedbackLoopTracing
import Logging
import NIOCore
import ServiceLifecycle
import Tracing

/// The pharmacies screens of every client: a ``LoopRegistry`` of pharmacies loops keyed by
/// session id, run as one `Service`.
///
/// The registry gives each session one loop, created by the first `PUT`, expired after
/// ``Configuration/idleTimeout`` without a request, capped at ``Configuration/maximumSessions``,
/// and drained on graceful shutdown: every session stops taking events, lets its in-flight
/// effects (a save, a delete) finish within the grace period, and reports its final state to
/// ``Configuration/onSessionEnded``.
public final class PharmacySessions: Service, Sendable {
    /// The registry's type.
    public typealias Registry = LoopRegistry<String, Pharmacies.State, Pharmacies.Event>
    /// How a session ended, handed to ``Configuration/onSessionEnded``.
    public typealias Report = LoopShutdownReport<Pharmacies.State>

    /// How sessions are made and how they end.
    public struct Configuration: Sendable {
        /// The backend every session's loop runs on.
        public var backend: Backend
        /// With ``Backend/actor``: the event loops that session loops are pinned to, one per
        /// session, chosen by its id, so that a session's reducer, feedbacks and observers run on
        /// one of the server's own threads (`LoopConfiguration.executor`). `nil`, the default,
        /// gives each session loop an actor on the Swift concurrency pool.
        public var eventLoops: (any EventLoopGroup)?
        /// How long a graceful shutdown (or an expiry) waits for each session's effects.
        public var gracePeriod: Duration
        /// How many sessions may be open at once; opening one more answers 503
        /// `too_many_sessions`.
        public var maximumSessions: Int
        /// How long a session may go without a request before it expires (`nil`: never).
        public var idleTimeout: Duration?
        /// The back end each new session talks to.
        public var makeService: @Sendable (_ session: String) -> any PharmaciesService
        /// Called once per session when its loop has stopped, with its final state.
        public var onSessionEnded: @Sendable (_ session: String, _ report: Report) async -> Void
        /// Metrics shared by every session's loop, if any.
        public var metrics: LoopMetrics?
        /// The registry's figures (sessions live, created, expired, refused), if any.
        public var registryMetrics: LoopRegistryMetrics?
        /// Where sessions log; each session adds its id as `loop` metadata.
        public var logger: Logger
        /// Where sessions are journaled, if anywhere. With a journal every event of a session is
        /// committed before it acts and before its request is answered, and a session survives
        /// the process: the first request for it in a new process recovers it from the journal.
        /// `nil`, the default, keeps sessions in memory only.
        public var journal: SessionJournal?
        /// Where traces go, if anywhere: each request gets a span (``PharmacyServer``), and each
        /// session's loop a span per event and per effect under it (`LoopTracing`), so that a
        /// back-end call made by an effect is in the trace of the request that caused it. `nil`,
        /// the default, makes no span.
        public var tracer: (any Tracer)?

        /// A configuration with these values; only `makeService` has no default.
        public init(
            backend: Backend = .callback,
            eventLoops: (any EventLoopGroup)? = nil,
            gracePeriod: Duration = .seconds(10),
            maximumSessions: Int = 10_000,
            idleTimeout: Duration? = .seconds(1800),
            makeService: @escaping @Sendable (_ session: String) -> any PharmaciesService,
            onSessionEnded: @escaping @Sendable (_ session: String, _ report: Report) async -> Void = { _, _ in },
            metrics: LoopMetrics? = nil,
            registryMetrics: LoopRegistryMetrics? = nil,
            logger: Logger = Logger(label: "PharmacySessions"),
            journal: SessionJournal? = nil,
            tracer: (any Tracer)? = nil
        ) {
            self.backend = backend
            self.eventLoops = eventLoops
            self.gracePeriod = gracePeriod
            self.maximumSessions = maximumSessions
            self.idleTimeout = idleTimeout
            self.makeService = makeService
            self.onSessionEnded = onSessionEnded
            self.metrics = metrics
            self.registryMetrics = registryMetrics
            self.logger = logger
            self.journal = journal
            self.tracer = tracer
        }
    }

    /// How sessions are made and end.
    public let configuration: Configuration
    /// The sessions' loops, by id (without a journal).
    public let registry: Registry
    /// The journaled sessions, when ``Configuration/journal`` is set.
    let durable: DurableSessions?

    /// No sessions yet; they run once ``run()`` runs.
    public init(configuration: Configuration) {
        self.configuration = configuration
        self.durable = configuration.journal.map { DurableSessions(journal: $0, configuration: configuration) }
        // Listed once: `EventLoopGroup.next()` round-robins, and a session must land on the same
        // event loop whichever request creates its loop.
        let eventLoops = configuration.eventLoops.map { Array($0.makeIterator()) } ?? []
        var registryConfiguration = Registry.Configuration(
            maximumLoops: configuration.maximumSessions, idleTimeout: configuration.idleTimeout,
            gracePeriod: configuration.gracePeriod, logger: Self.registryLogger(configuration.logger),
            metrics: configuration.registryMetrics, loopMetrics: configuration.metrics)
        // A request refused for the session cap or the shutdown shows in its trace too.
        registryConfiguration.tracing = configuration.tracer.map { LoopTracing(tracer: $0) }
        self.registry = Registry(
            configuration: registryConfiguration,
            makeLoop: { id in
                var logger = configuration.logger
                logger[metadataKey: "session"] = "\(id)"
                return Pharmacies.makeLoop(
                    environment: .init(service: configuration.makeService(id)),
                    backend: configuration.backend,
                    configuration: LoopConfiguration(
                        label: "pharmacies", logger: logger,
                        instruments: configuration.tracer.map { [LoopTracing(tracer: $0)] } ?? [],
                        executor: eventLoops.isEmpty ? nil : eventLoops[Self.slot(of: id, among: eventLoops.count)].executor),
                    instrumentation: configuration.metrics?.instrumentation())
            },
            onLoopEnded: { id, report, exit in
                configuration.logger.debug(
                    "session ended",
                    metadata: ["session": "\(id)", "exit": "\(exit)", "ending": "\(report.ending)"])
                await configuration.onSessionEnded(id, report)
            })
    }

    /// The number of open sessions (ending ones included).
    public var count: Int { registry.count + (durable?.registry.count ?? 0) }

    /// Returns once shutdown has begun for the sessions: no session opens any more and each is
    /// draining. For readiness checks and tests.
    public func waitUntilDraining() async {
        await registry.waitUntilShuttingDown()
        await durable?.registry.waitUntilShuttingDown()
    }

    /// Runs every session until graceful shutdown or cancellation, then drains them (see
    /// ``LoopRegistry``).
    public func run() async throws {
        if let durable {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await self.registry.run() }
                group.addTask { try await durable.registry.run() }
                try await group.waitForAll()
            }
        } else {
            try await registry.run()
        }
        let statistics = durable.map { "\($0.registry.statistics)" } ?? "\(registry.statistics)"
        configuration.logger.info("sessions stopped", metadata: ["statistics": "\(statistics)"])
    }

    /// The registries' log. A session's end (an expiry, a `DELETE`) is routine: the two info
    /// lines its loop service logs about draining are left out; notices and errors stay.
    static func registryLogger(_ logger: Logger) -> Logger {
        var logger = logger
        logger.logLevel = max(logger.logLevel, .notice)
        return logger
    }

    /// The event loop of session `id`: a stable hash (FNV-1a, not `hashValue`, which is seeded
    /// per process), so the choice is the same in every run.
    static func slot(of id: String, among count: Int) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in id.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return Int(hash % UInt64(count))
    }

    /// 1 to 64 letters, digits, `-` or `_`.
    static func isValid(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }
}
