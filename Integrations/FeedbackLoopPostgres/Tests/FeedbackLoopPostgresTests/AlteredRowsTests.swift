import FeedbackLoopDurable
import Foundation
import PostgresNIO
import Testing

@testable import FeedbackLoopPostgres

/// A journal whose tables live in a schema of their own, so that a test can alter them — column
/// types, stored values — without disturbing the tests that run beside it on the same server.
struct IsolatedStore {
    let schema: String
    let client: PostgresClient
    let journal: PostgresJournal

    /// Runs `body` on a new store and drops its schema afterwards, whether `body` throws or not.
    static func with(
        leaseDuration: Duration = .seconds(10), _ body: (IsolatedStore) async throws -> Void
    ) async throws {
        let url = try #require(Server.url)
        let schema = "isolated_\(UInt64.random(in: 0...UInt64.max))"
        try await Server.client.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \(schema)"))
        var configuration = try PostgresJournal.configuration(url: url)
        configuration.options.additionalStartupParameters.append(("search_path", schema))
        let client = PostgresClient(configuration: configuration)
        let running = Task { await client.run() }
        let store = IsolatedStore(
            schema: schema, client: client,
            journal: PostgresJournal(client: client, node: "isolated", leaseDuration: leaseDuration))
        let outcome: Result<Void, any Error>
        do {
            try await body(store)
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        running.cancel()
        try await Server.client.query(PostgresQuery(unsafeSQL: "DROP SCHEMA \(schema) CASCADE"))
        try outcome.get()
    }

    /// Runs `sql`, as another tool would, on the store's tables.
    func execute(_ sql: String) async throws {
        for try await _ in try await client.query(PostgresQuery(unsafeSQL: sql)) {}
    }

    /// A journal of loop `loop` with events 1...3 (payloads "1", "2", "3") and a snapshot at 2.
    func fill(_ loop: String) async throws -> UInt64 {
        let epoch = try await journal.acquire(loop: loop)
        let events = (1...3).map { JournalRecord(sequence: UInt64($0), schemaVersion: 1, payload: Array("\($0)".utf8)) }
        try await journal.append(loop: loop, epoch: epoch, events: Array(events[0...1]), snapshot: JournalRecord(sequence: 2, schemaVersion: 1, payload: Array("{}".utf8)))
        try await journal.append(loop: loop, epoch: epoch, events: [events[2]], snapshot: nil)
        return epoch
    }
}

/// Rows that another tool altered are clear errors naming the loop, the record and the column:
/// never a trap, never a record read from the wrong bytes.
@Suite("PostgreSQL: rows altered by another tool", .enabled(if: Server.url != nil, Server.skipReason))
struct AlteredRowsTests {
    /// The error `operation` throws is a `JournalError` whose description names every one of `words`.
    static func expectJournalError(
        naming words: [String], sourceLocation: SourceLocation = #_sourceLocation, _ operation: () async throws -> Void
    ) async {
        do {
            try await operation()
            Issue.record("no error; expected one naming \(words)", sourceLocation: sourceLocation)
        } catch let error as JournalError {
            for word in words {
                #expect("\(error)".contains(word), "\(error) does not name \(word)", sourceLocation: sourceLocation)
            }
        } catch {
            Issue.record("\(type(of: error)) \(String(reflecting: error)) is not a JournalError", sourceLocation: sourceLocation)
        }
    }

    /// A numeric sequence still compares with the query's bound, so the row reaches the journal.
    @Test func anEventSequenceStoredAsNumeric() async throws {
        try await IsolatedStore.with { store in
            _ = try await store.fill("altered")
            try await store.execute("ALTER TABLE feedbackloop_events ALTER COLUMN sequence TYPE NUMERIC")
            await Self.expectJournalError(naming: ["'altered'", "the event after 0", "'sequence'", "numeric"]) {
                _ = try await store.journal.events(loop: "altered", after: 0, limit: 10)
            }
        }
    }

    /// A text sequence no longer compares with the query's bound: the server's error, with the loop.
    @Test func anEventSequenceStoredAsText() async throws {
        try await IsolatedStore.with { store in
            _ = try await store.fill("altered")
            try await store.execute("ALTER TABLE feedbackloop_events ALTER COLUMN sequence TYPE TEXT")
            await Self.expectJournalError(naming: ["'altered'", "reading events", "text > bigint"]) {
                _ = try await store.journal.events(loop: "altered", after: 0, limit: 10)
            }
        }
    }

    @Test func aSchemaVersionStoredAsText() async throws {
        try await IsolatedStore.with { store in
            _ = try await store.fill("altered")
            try await store.execute("ALTER TABLE feedbackloop_events ALTER COLUMN schema_version TYPE TEXT")
            await Self.expectJournalError(naming: ["'altered'", "event 1", "'schema_version'", "text"]) {
                _ = try await store.journal.events(loop: "altered", after: 0, limit: 10)
            }
        }
    }

    @Test func aNegativeSchemaVersion() async throws {
        try await IsolatedStore.with { store in
            _ = try await store.fill("altered")
            try await store.execute("UPDATE feedbackloop_events SET schema_version = -1 WHERE sequence = 3")
            await Self.expectJournalError(naming: ["'altered'", "event 3", "'schema_version'", "-1"]) {
                _ = try await store.journal.events(loop: "altered", after: 2, limit: 10)
            }
        }
    }

    /// postgres-nio reads a `BYTEA` from any column: without a type check the record would carry
    /// the integer's eight bytes as its payload.
    @Test func aPayloadStoredAsAnInteger() async throws {
        try await IsolatedStore.with { store in
            _ = try await store.fill("altered")
            try await store.execute("ALTER TABLE feedbackloop_events ALTER COLUMN payload TYPE BIGINT USING 7")
            await Self.expectJournalError(naming: ["'altered'", "event 1", "'payload'", "bigint"]) {
                _ = try await store.journal.events(loop: "altered", after: 0, limit: 10)
            }
        }
    }

    @Test func aNullPayload() async throws {
        try await IsolatedStore.with { store in
            _ = try await store.fill("altered")
            try await store.execute("ALTER TABLE feedbackloop_events ALTER COLUMN payload DROP NOT NULL")
            try await store.execute("UPDATE feedbackloop_events SET payload = NULL WHERE sequence = 2")
            await Self.expectJournalError(naming: ["'altered'", "event 2", "'payload'", "NULL"]) {
                _ = try await store.journal.events(loop: "altered", after: 0, limit: 10)
            }
        }
    }

    @Test func aNegativeSnapshotSequence() async throws {
        try await IsolatedStore.with { store in
            _ = try await store.fill("altered")
            try await store.execute("UPDATE feedbackloop_snapshots SET sequence = -2")
            await Self.expectJournalError(naming: ["'altered'", "the latest snapshot", "'sequence'", "-2"]) {
                _ = try await store.journal.latestSnapshot(loop: "altered")
            }
        }
    }

    @Test func aSnapshotPayloadStoredAsText() async throws {
        try await IsolatedStore.with { store in
            _ = try await store.fill("altered")
            try await store.execute("ALTER TABLE feedbackloop_snapshots ALTER COLUMN payload TYPE TEXT USING 'x'")
            await Self.expectJournalError(naming: ["'altered'", "snapshot 2", "'payload'", "text"]) {
                _ = try await store.journal.latestSnapshot(loop: "altered")
            }
        }
    }

    /// The next epoch is the stored one plus one: from a negative epoch it is still negative.
    @Test func aNegativeEpoch() async throws {
        try await IsolatedStore.with { store in
            _ = try await store.fill("altered")
            try await store.execute("UPDATE feedbackloop_leases SET epoch = -9")
            await Self.expectJournalError(naming: ["'altered'", "the lease", "'epoch'", "-8"]) {
                _ = try await store.journal.acquire(loop: "altered")
            }
        }
    }

    /// An append that does not continue the head reads the head to say which sequence was expected.
    @Test func aNegativeHead() async throws {
        try await IsolatedStore.with { store in
            let epoch = try await store.fill("altered")
            try await store.execute("UPDATE feedbackloop_leases SET head = -3")
            await Self.expectJournalError(naming: ["'altered'", "the lease", "'head'", "-3"]) {
                try await store.journal.append(
                    loop: "altered", epoch: epoch, events: [JournalRecord(sequence: 4, schemaVersion: 1, payload: [1])], snapshot: nil)
            }
        }
    }

    @Test func anEpochStoredAsText() async throws {
        try await IsolatedStore.with { store in
            _ = try await store.fill("altered")
            try await store.execute("ALTER TABLE feedbackloop_leases ALTER COLUMN epoch TYPE TEXT")
            await Self.expectJournalError(naming: ["'altered'"]) {
                _ = try await store.journal.acquire(loop: "altered")
            }
        }
    }

    @Test func anInboxPayloadStoredAsText() async throws {
        try await IsolatedStore.with { store in
            try await store.journal.deliver(5, to: "altered")
            try await store.execute("ALTER TABLE feedbackloop_inbox ALTER COLUMN payload TYPE TEXT USING 'x'")
            await Self.expectJournalError(naming: ["'altered'", "inbox entry", "'payload'", "text"]) {
                _ = try await store.journal.inbox(loop: "altered", limit: 10)
            }
        }
    }
}
