#if Postgres
import FeedbackLoop
import FeedbackLoopDurable
import FeedbackLoopDurableTesting
import FeedbackLoopPostgres
import Foundation
import Logging
import PostgresNIO
import Testing

/// The server the tests use: `FEEDBACKLOOP_POSTGRES_URL`, set by `scripts/postgres.sh`.
enum Server {
    static let url = ProcessInfo.processInfo.environment["FEEDBACKLOOP_POSTGRES_URL"]
    static let skipReason: Comment =
        "FEEDBACKLOOP_POSTGRES_URL is not set: run `.ci/postgres.sh swift test --enable-all-traits --filter FeedbackLoopPostgresTests` (it starts a server)"

    /// One running client for the whole test process.
    static let client: PostgresClient = {
        guard let url, let configuration = try? PostgresJournal.configuration(url: url) else {
            fatalError("FEEDBACKLOOP_POSTGRES_URL is not a usable postgres:// URL: \(url ?? "unset")")
        }
        let client = PostgresClient(configuration: configuration)
        Task.detached { await client.run() }
        return client
    }()

    static func journal(
        leaseDuration: Duration = .seconds(10), statementTimeout: Duration? = nil, retention: JournalRetention? = nil
    ) -> PostgresJournal {
        PostgresJournal(
            client: client, node: "node-\(UInt64.random(in: 0...UInt64.max))", leaseDuration: leaseDuration,
            statementTimeout: statementTimeout, retention: retention)
    }

    /// Runs `query` on the shared client and reads its answer to the end, so that it has run
    /// when this returns.
    ///
    /// With no `statement_timeout`: the journals arm the sessions of the client's connections
    /// with theirs, some as short as 300 ms, and a test's own query (a `pg_sleep` that waits for a
    /// lease to end) must not be cancelled by another test's bound. The session's bound is put
    /// back afterwards, as the journal that armed it expects (not in a transaction: `CREATE
    /// DATABASE` cannot run in one).
    static func execute(_ query: PostgresQuery) async throws {
        try await client.withConnection { connection in
            let logger = Logger(label: "test")
            var armed = "0"
            for try await setting in try await connection.query("SELECT current_setting('statement_timeout')", logger: logger)
                .decode(String.self)
            {
                armed = setting
            }
            try await connection.execute("SET statement_timeout = 0", logger: logger)
            let outcome: Result<Void, any Error>
            do {
                outcome = .success(try await connection.execute(query, logger: logger))
            } catch {
                outcome = .failure(error)
            }
            try await connection.execute("SELECT set_config('statement_timeout', \(armed), false)", logger: logger)
            try outcome.get()
        }
    }

    /// Runs `body` on a connection of its own, outside the client's pool (for a test that holds a
    /// transaction open while the journal works), and closes it afterwards, whether `body` throws
    /// or not.
    static func withConnection<Value>(_ body: (PostgresConnection) async throws -> Value) async throws -> Value {
        let configuration = try PostgresJournal.configuration(url: try #require(url))
        let options = PostgresConnection.Configuration(
            host: try #require(configuration.host), port: try #require(configuration.port), username: configuration.username,
            password: configuration.password, database: configuration.database, tls: .disable)
        let connection = try await PostgresConnection.connect(configuration: options, id: 0, logger: Logger(label: "test-connection"))
        let outcome: Result<Value, any Error>
        do {
            outcome = .success(try await body(connection))
        } catch {
            outcome = .failure(error)
        }
        try await connection.close()
        return try outcome.get()
    }

    /// Expires `loop`'s lease and lets another node take it, as when its owner paused too long.
    static func depose(_ loop: String) async throws {
        try await execute("UPDATE feedbackloop_leases SET lease_until = now() - interval '1 second' WHERE loop = \(loop)")
        _ = try await journal().acquire(loop: loop)
    }

    static func environment(_ backend: Backend) -> DurabilityEnvironment {
        DurabilityEnvironment(
            backend: backend, makeJournal: { journal() }, depose: depose, makeJournalWithRetention: { journal(retention: $0) })
    }
}

/// The durability suite on the PostgreSQL store, on every backend, against a real server.
@Suite("Durability: PostgreSQL", .enabled(if: Server.url != nil, Server.skipReason))
struct PostgresDurabilityTests {
    @Test(arguments: Backend.allCases)
    func persistBeforeAct(backend: Backend) async throws {
        try await DurabilityChecks.persistBeforeAct(Server.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func groupCommit(backend: Backend) async throws {
        try await DurabilityChecks.groupCommit(Server.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func snapshots(backend: Backend) async throws {
        try await DurabilityChecks.snapshots(Server.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func recovery(backend: Backend) async throws {
        try await DurabilityChecks.recovery(Server.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func effectEventsAreJournaledDensely(backend: Backend) async throws {
        try await DurabilityChecks.effectEventsAreJournaledDensely(Server.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func undecodableRecord(backend: Backend) async throws {
        try await DurabilityChecks.undecodableRecord(Server.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func snapshotAheadOfEvents(backend: Backend) async throws {
        try await DurabilityChecks.snapshotAheadOfEvents(Server.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func anotherFeaturesLoop(backend: Backend) async throws {
        try await DurabilityChecks.anotherFeaturesLoop(Server.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func aLoopWithoutAFeatureIsAdopted(backend: Backend) async throws {
        try await DurabilityChecks.aLoopWithoutAFeatureIsAdopted(Server.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func replayCheckOfAnotherFeaturesLoop(backend: Backend) async throws {
        try await DurabilityChecks.replayCheckOfAnotherFeaturesLoop(Server.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func newerSchemaVersion(backend: Backend) async throws {
        try await DurabilityChecks.newerSchemaVersion(Server.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func eventAfterStop(backend: Backend) async throws {
        try await DurabilityChecks.eventAfterStop(Server.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func deposedOwnerIsFenced(backend: Backend) async throws {
        try await DurabilityChecks.deposedOwnerIsFenced(Server.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func retention(backend: Backend) async throws {
        try await DurabilityChecks.retention(Server.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func deposedOwnerPrunesNothing(backend: Backend) async throws {
        try await DurabilityChecks.deposedOwnerPrunesNothing(Server.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func pruningIsBounded(backend: Backend) async throws {
        try await DurabilityChecks.pruningIsBounded(Server.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func archive(backend: Backend) async throws {
        try await DurabilityChecks.archive(Server.environment(backend))
    }

    @Test(arguments: Backend.allCases)
    func failedArchiveDeletesNothing(backend: Backend) async throws {
        try await DurabilityChecks.failedArchiveDeletesNothing(Server.environment(backend))
    }
}

/// What only a store with leases does: a live lease keeps others out, a lost one stops the loop,
/// and any node reaches a loop through the inbox.
@Suite("PostgreSQL leases and inbox", .enabled(if: Server.url != nil, Server.skipReason))
struct PostgresLeaseTests {
    static func open(
        _ id: String, _ journal: PostgresJournal, _ backend: Backend, effects: Probe<Ledger.EffectEntry> = Probe()
    ) async throws -> DurableLoop<Ledger.State, Ledger.Event> {
        try await DurableLoop(
            id: id, journal: journal, initial: Ledger.State(), reduce: Ledger.reduce,
            feedbacks: { Ledger.feedbacks($0, effects: effects, charger: .hangs) }, backend: backend)
    }

    @Test(arguments: Backend.allCases)
    func aLiveLeaseKeepsAnotherNodeOut(backend: Backend) async throws {
        let id = "live-lease-\(UInt64.random(in: 0...UInt64.max))"
        let owner = try await Self.open(id, Server.journal(), backend)
        await #expect {
            _ = try await Self.open(id, Server.journal(), backend)
        } throws: { error in
            (error as? JournalError) == .ownedElsewhere(loop: id)
        }
        try await owner.sendAndWait(.add(1))
        await owner.stop()
        // Released: another node takes it at once and sees the event.
        let next = try await Self.open(id, Server.journal(), backend)
        #expect(next.state.total == 1)
        await next.stop()
    }

    @Test(arguments: Backend.allCases)
    func aLostLeaseStopsTheLoopAndCancelsItsEffects(backend: Backend) async throws {
        let id = "lost-lease-\(UInt64.random(in: 0...UInt64.max))"
        // A long lease: the keeper must notice the refused renewal, not wait for the lease to run out.
        let journal = Server.journal(leaseDuration: .seconds(60))
        let effects = Probe<Ledger.EffectEntry>()
        let loop = try await Self.open(id, journal, backend, effects: effects)
        let keeper = LeaseKeeper(loop: loop, journal: journal, renewEvery: .milliseconds(50))
        let keeping = Task { try await keeper.run() }
        try await loop.sendAndWait(.charge(3))
        try await effects.wait(for: "the charge effect") { $0.contains { $0.startedAmount == 3 } }
        try await Server.depose(id)
        try await effects.wait(for: "the effect to be cancelled once the keeper found the lease lost", timeout: .seconds(5)) {
            $0.contains(.cancelled(3))
        }
        try await keeping.value
        #expect(!loop.isRunning)
        #expect((loop.failure as? JournalError) == .fenced(loop: id, epoch: loop.epoch))
        #expect(throws: DurableLoopError.self) { try loop.send(.add(1)) }
    }

    /// The database stops answering the keeper: a failed renewal is not a lost lease, and the
    /// keeper stops the loop only once a whole lease has passed without one, as fenced.
    @Test(arguments: Backend.allCases)
    func anUnansweredRenewalStopsTheLoopOnlyOnceTheLeaseIsOver(backend: Backend) async throws {
        let id = "unanswered-\(UInt64.random(in: 0...UInt64.max))"
        let loop = try await Self.open(id, Server.journal(), backend)
        // The keeper renews through a client of a closed port: every renewal is unavailable.
        let client = PostgresClient(configuration: try PostgresJournal.configuration(url: "postgres://feedbackloop@127.0.0.1:1/feedbackloop"))
        let running = Task { await client.run() }
        defer { running.cancel() }
        let unreachable = PostgresJournal(
            client: client, node: "unreachable", leaseDuration: .seconds(1), connectionTimeout: .milliseconds(100))
        let keeping = Task { try await LeaseKeeper(loop: loop, journal: unreachable, renewEvery: .milliseconds(100)).run() }
        try await Bounded.wait(.seconds(20), for: "the keeper to give up") { try await keeping.value }
        #expect(!loop.isRunning)
        #expect((loop.failure as? JournalError) == .fenced(loop: id, epoch: loop.epoch))
    }

    @Test(arguments: Backend.allCases)
    func theKeeperKeepsTheLeaseAlivePastItsDuration(backend: Backend) async throws {
        let id = "kept-lease-\(UInt64.random(in: 0...UInt64.max))"
        // Short, but renewed twenty times a lease, on a client of its own: with the shared
        // client's pool busy with the other tests on a loaded machine, 500 ms and 1 s leases
        // were lost between two renewals.
        let client = PostgresClient(configuration: try PostgresJournal.configuration(url: try #require(Server.url)))
        let running = Task { await client.run() }
        defer { running.cancel() }
        let journal = PostgresJournal(client: client, node: "keeper-\(UInt64.random(in: 0...UInt64.max))", leaseDuration: .seconds(2))
        let loop = try await Self.open(id, journal, backend)
        let keeping = Task { try await LeaseKeeper(loop: loop, journal: journal, renewEvery: .milliseconds(100)).run() }
        // Lease expiry is wall time on the database's clock: let more than a lease pass.
        try await Task.sleep(for: .seconds(3))
        let state = try await loop.sendAndWait(.add(2))
        #expect(state.total == 2)
        await #expect(throws: JournalError.ownedElsewhere(loop: id)) {
            _ = try await Server.journal().acquire(loop: id)
        }
        keeping.cancel()
        try await keeping.value
        #expect(!loop.isRunning)
    }

    @Test(arguments: Backend.allCases)
    func anotherNodeSendsThroughTheInbox(backend: Backend) async throws {
        let id = "inbox-\(UInt64.random(in: 0...UInt64.max))"
        let journal = Server.journal()
        let loop = try await Self.open(id, journal, backend)
        let totals = Probe<Int>()
        let observation = loop.observe { totals.record($0.total) }
        let relaying = Task { try await InboxRelay(loop: loop, journal: journal, pollEvery: .seconds(30)).run() }
        // Another node: its own journal handle; it does not own the loop.
        let other = Server.journal()
        try await other.deliver(Ledger.Event.add(5), to: id)
        try await other.deliver(Ledger.Event.add(6), to: id)
        // The relay polls every 30 s: only the notification can deliver this in time.
        try await totals.wait(for: "the delivered events to be reduced") { $0.last == 11 }
        observation.cancel()
        await loop.stop()
        try await relaying.value
        let records = try await other.events(loop: id, after: 0, limit: 10)
        #expect(records.map(\.sequence) == [1, 2])
        let left = try await Server.client.query("SELECT count(*) FROM feedbackloop_inbox WHERE loop = \(id)")
        for try await count in left.decode(Int64.self) { #expect(count == 0) }
    }
}
#endif
