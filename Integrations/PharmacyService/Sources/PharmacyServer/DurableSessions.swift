import FeedbackExamples
import FeedbackLoop
import FeedbackLoopDurable
import FeedbackLoopPostgres
import FeedbackLoopServices
import Foundation
import Logging
import PostgresNIO
import Synchronization

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
    /// - Throws: `JournalError.unavailable(_:)` naming what the URL lacks.
    public static func postgres(url: String, node: String, leaseDuration: Duration, logger: Logger) throws -> SessionJournal {
        let client = PostgresClient(configuration: try PostgresJournal.configuration(url: url), backgroundLogger: logger)
        return .postgres(PostgresJournal(client: client, node: node, leaseDuration: leaseDuration, logger: logger))
    }
}

/// The sessions of a server with a journal: a ``LoopRegistry`` whose entry for a session holds
/// its ``DurableLoop``, recovered from the journal on the session's first use in this process.
///
/// The registry gives each session its lifecycle, as without a journal: one entry per id,
/// expiry when idle, the cap, and a stop on graceful shutdown. Its loop per session is a host
/// whose state is the session's ``DurableSessionHandle``; the durable loop itself is recovered
/// by the first request that needs it, and stopped when the registry's entry ends.
final class DurableSessions: Sendable {
    typealias Registry = LoopRegistry<String, DurableSessionHandle, Never>

    let journal: SessionJournal
    let registry: Registry

    init(journal: SessionJournal, configuration: PharmacySessions.Configuration) {
        self.journal = journal
        let eventLoops = configuration.eventLoops.map { Array($0.makeIterator()) } ?? []
        let recover: @Sendable (String) async throws -> DurableSessionHandle.Running = { id in
            var logger = configuration.logger
            logger[metadataKey: "session"] = "\(id)"
            // The metrics see the durable loop's inner loop, where an effect's event is one step
            // to be journaled and another once reduced.
            let loopConfiguration = LoopConfiguration(
                label: "pharmacies", logger: logger, instruments: configuration.metrics.map { [$0] } ?? [],
                executor: eventLoops.isEmpty
                    ? nil : eventLoops[PharmacySessions.slot(of: id, among: eventLoops.count)].executor)
            let environment = Pharmacies.Environment(service: configuration.makeService(id))
            let durable = DurableConfiguration(logger: logger)
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
                gracePeriod: configuration.gracePeriod, logger: configuration.logger,
                metrics: configuration.registryMetrics),
            makeLoop: { id in
                Loop(initial: DurableSessionHandle(id: id, recover: recover), reduce: { _, _ in })
            },
            onLoopEnded: { id, report, exit in
                let finalState = await report.finalState.close()
                configuration.logger.debug(
                    "session ended", metadata: ["session": "\(id)", "exit": "\(exit)"])
                if let screen = finalState?.pharmacies {
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

/// One session's durable loop in this process: recovered from the journal by the first use,
/// recovered again after it failed (its lease was lost, an append was fenced), stopped by
/// ``close()``.
final class DurableSessionHandle: Sendable, Hashable {
    struct Running: Sendable {
        let loop: DurableLoop<SessionState, SessionEvent>
        let keeper: Task<Void, Never>?
    }

    private enum Phase {
        case idle
        case recovering(Task<Running, any Error>)
        case running(Running)
        case closed
    }

    /// Why a session has no loop.
    enum Unavailable: Error {
        /// The registry's entry ended (shutdown, expiry, `DELETE`).
        case closed
    }

    let id: String
    private let recover: @Sendable (String) async throws -> Running
    private let phase = Mutex(Phase.idle)

    init(id: String, recover: @escaping @Sendable (String) async throws -> Running) {
        self.id = id
        self.recover = recover
    }

    /// The session's running loop, recovered now if there is none (or the last one failed).
    ///
    /// - Throws: what recovery throws (`JournalError.ownedElsewhere(loop:)` while another
    ///   server holds the session's lease); ``Unavailable/closed`` after ``close()``.
    func loop() async throws -> DurableLoop<SessionState, SessionEvent> {
        let task = phase.withLock { phase -> Task<Running, any Error>? in
            switch phase {
            case .running(let running) where running.loop.isRunning:
                return nil
            case .recovering(let task):
                return task
            case .closed:
                return nil
            case .idle, .running:
                // A loop that stopped on its own (fenced, lease lost) is replaced: recovery takes
                // the session again if it can, or says who holds it.
                let task = Task { [id, recover] in try await recover(id) }
                phase = .recovering(task)
                return task
            }
        }
        guard let task else {
            return try phase.withLock { phase in
                switch phase {
                case .running(let running): return running.loop
                default: throw Unavailable.closed
                }
            }
        }
        let running: Running
        do {
            running = try await task.value
        } catch {
            phase.withLock { phase in
                if case .recovering = phase { phase = .idle }
            }
            throw error
        }
        let installed = phase.withLock { phase -> Bool in
            switch phase {
            case .recovering:
                phase = .running(running)
                return true
            case .running(let current):
                return current.loop === running.loop
            case .idle, .closed:
                return false
            }
        }
        guard installed else {
            // Closed while recovering: this loop must not outlive its entry.
            await Self.stop(running)
            throw Unavailable.closed
        }
        return running.loop
    }

    /// Stops the session's loop, if it has one (waiting for a recovery in progress), and
    /// returns its final state. Later uses throw ``Unavailable/closed``.
    func close() async -> SessionState? {
        let previous = phase.withLock { phase -> Phase in
            defer { phase = .closed }
            return phase
        }
        switch previous {
        case .running(let running):
            await Self.stop(running)
            return running.loop.state
        case .recovering(let task):
            guard let running = try? await task.value else { return nil }
            await Self.stop(running)
            return running.loop.state
        case .idle, .closed:
            return nil
        }
    }

    /// Stops the loop, which gives its lease back. The lease keeper, if any, is left to end by
    /// itself at its next wake-up (it sees the loop stopped): cancelling it would make it stop
    /// the loop once more, in a cancelled task, and log the second release's `CancellationError`.
    private static func stop(_ running: Running) async {
        await running.loop.stop()
    }

    static func == (lhs: DurableSessionHandle, rhs: DurableSessionHandle) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
