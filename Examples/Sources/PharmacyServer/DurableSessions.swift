import FeedbackExamples
import FeedbackLoop
import FeedbackLoopDurable
import FeedbackLoopPostgres
import FeedbackLoopServices
import FeedbackLoopTracing
import Foundation
import Logging
import PostgresNIO

/// Where durable sessions keep their journals.
public enum SessionJournal: Sendable {
    /// One SQLite file, for one server process.
    case sqlite(SQLiteJournal)
    /// A PostgreSQL database, shared by several server processes: each session is owned by one
    /// of them at a time, through a lease that this server renews every third of its duration.
    /// The journal's client must run while the server does; ``PharmacyServer`` runs it.
    case postgres(PostgresJournal)

    /// The journal in the SQLite file at `path`, created if missing.
    ///
    /// - Throws: the file cannot be opened, or is not a SQLite database.
    public static func sqlite(path: String) throws -> SessionJournal {
        .sqlite(try SQLiteJournal(path: path))
    }

    /// The journal in the PostgreSQL database at `url` (`postgres://user[:password]@host[:port]/database`,
    /// without TLS), this server named `node` in its leases, which last `leaseDuration`.
    ///
    /// Each connection attempt gives up after ``postgresConnectTimeout``.
    ///
    /// - Throws: `JournalError.unavailable(_:)` naming what the URL lacks.
    public static func postgres(url: String, node: String, leaseDuration: Duration, logger: Logger) throws -> SessionJournal {
        let configuration = try PostgresJournal.configuration(url: url, connectTimeout: postgresConnectTimeout)
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        return .postgres(PostgresJournal(client: client, node: node, leaseDuration: leaseDuration, logger: logger))
    }

    /// How long a connection attempt to PostgreSQL may take (the journal's default is 5 s). Each
    /// of the journal's operations waits at most `PostgresJournal.connectionTimeout` (5 s) for a
    /// connection.
    public static let postgresConnectTimeout = Duration.seconds(3)

    /// The journal behind either case.
    var eventJournal: any EventJournal {
        switch self {
        case .sqlite(let journal): journal
        case .postgres(let journal): journal
        }
    }

    /// Whether `session` has anything in the journal: a read, which takes no ownership and
    /// writes nothing.
    func hasRecords(_ session: String) async throws -> Bool {
        let journal = eventJournal
        if try await !journal.events(loop: session, after: 0, limit: 1).isEmpty { return true }
        return try await journal.latestSnapshot(loop: session) != nil
    }
}

/// The sessions of a server with a journal: a ``LoopRegistry`` whose entry for a session holds
/// its ``DurableLoop``, recovered from the journal on the session's first use in this process.
///
/// The registry gives each session its lifecycle, as without a journal: one entry per id,
/// expiry when idle, the cap, and a stop on graceful shutdown. Its loop per session is a host
/// whose state is the session's ``DurableSessionHandle``; the durable loop itself is recovered
/// by the first request that needs it, and stopped when the registry's entry ends. The entry of
/// a session that is not open leaves the registry as soon as no request uses it (see
/// ``DurableSessionHandle/leave()``); an id with nothing in the journal never gets one
/// (``requireJournaled(_:)``).
///
/// An entry that expires closes its session in the journal (``SessionEvent/closed``): an expired
/// session is gone, as without a journal. On shutdown the sessions stay open in the journal.
final class DurableSessions: Sendable {
    typealias Registry = LoopRegistry<String, DurableSessionHandle, Never>

    let journal: SessionJournal
    let registry: Registry
    let health: JournalHealth

    /// How long a health check, or the check that an id has a journal, may take.
    static let journalTimeout = Duration.seconds(2)

    init(journal: SessionJournal, configuration: PharmacySessions.Configuration) {
        self.journal = journal
        let health = JournalHealth(journal: journal, timeout: Self.journalTimeout)
        self.health = health
        let eventLoops = configuration.eventLoops.map { Array($0.makeIterator()) } ?? []
        let recover: @Sendable (String) async throws -> DurableSessionHandle.Running = { id in
            // Recovery waits as long as the journal's client retries; a journal that does not
            // answer a trivial read is reported at once instead.
            if let unavailable = await health.check() { throw unavailable }
            var logger = configuration.logger
            logger[metadataKey: "session"] = "\(id)"
            // The metrics see the durable loop's inner loop, where an effect's event is one step
            // to be journaled and another once reduced.
            // Spans too, when the server traces: the durable loop carries each request's context
            // through its journal into the inner loop, whose steps and effects LoopTracing spans.
            var instruments: [any LoopInstrument] = []
            if let metrics = configuration.metrics { instruments.append(metrics) }
            if let tracer = configuration.tracer { instruments.append(LoopTracing(tracer: tracer)) }
            let loopConfiguration = LoopConfiguration(
                label: "pharmacies", logger: logger, instruments: instruments,
                executor: eventLoops.isEmpty
                    ? nil : eventLoops[PharmacySessions.slot(of: id, among: eventLoops.count)].executor)
            let environment = Pharmacies.Environment(service: configuration.makeService(id))
            let durable = DurableConfiguration(
                feature: DurableSession.feature, schemaVersion: DurableSession.schemaVersion, logger: logger)
            switch journal {
            case .sqlite(let journal):
                let loop = try await DurableLoop(
                    id: id, journal: journal, initial: SessionState(), reduce: DurableSession.reduce,
                    feedbacks: { _ in DurableSession.feedbacks(environment) }, backend: configuration.backend,
                    configuration: durable, loopConfiguration: loopConfiguration)
                return .init(loop: loop, keeper: nil)
            case .postgres(let journal):
                let loop = try await DurableLoop(
                    id: id, journal: journal, initial: SessionState(), reduce: DurableSession.reduce,
                    feedbacks: { _ in DurableSession.feedbacks(environment) }, backend: configuration.backend,
                    configuration: durable, loopConfiguration: loopConfiguration)
                // Detached: the keeper must not see the server's graceful shutdown, which stops
                // the loop through the registry (and gives the lease back) instead.
                let keeper = Task.detached {
                    // It stops the loop itself when the lease is lost; nothing else to do here.
                    do { try await LeaseKeeper(loop: loop, journal: journal).run() } catch {}
                }
                return .init(loop: loop, keeper: keeper)
            }
        }
        self.registry = Registry(
            configuration: .init(
                maximumLoops: configuration.maximumSessions, idleTimeout: configuration.idleTimeout,
                gracePeriod: configuration.gracePeriod, logger: PharmacySessions.registryLogger(configuration.logger),
                metrics: configuration.registryMetrics),
            makeLoop: { id in
                Loop(initial: DurableSessionHandle(id: id, recover: recover), reduce: { _, _ in })
            },
            onLoopEnded: { id, report, exit in
                let screen = await report.finalState.close(closingTheSession: exit == .evicted)
                configuration.logger.debug(
                    "session ended", metadata: ["session": "\(id)", "exit": "\(exit)"])
                if let screen {
                    await configuration.onSessionEnded(
                        id,
                        PharmacySessions.Report(
                            finalState: screen, statistics: report.statistics, eventsRefused: report.eventsRefused,
                            ending: Self.ending(report.ending)))
                }
            })
    }
}

extension DurableSessions {
    /// Throws ``APIError/sessionNotFound(_:)`` when `id` has no entry here and nothing in the
    /// journal: a session that was never opened. Such a request then writes nothing (recovering
    /// takes ownership, a write) and takes no room in the registry.
    ///
    /// - Throws: ``JournalHealth/Unavailable`` when the journal does not answer in time.
    func requireJournaled(_ id: String) async throws {
        guard registry.existing(id) == nil else { return }
        let journal = self.journal
        guard try await health.bounded({ try await journal.hasRecords(id) }) else {
            throw APIError.sessionNotFound(id)
        }
    }

    /// The same ending, for the report of the session's screen.
    static func ending(_ ending: Registry.Report.Ending) -> PharmacySessions.Report.Ending {
        switch ending {
        case .drained: .drained
        case .gracePeriodExpired: .gracePeriodExpired
        case .cancelled: .cancelled
        default: .loopStopped
        }
    }
}

