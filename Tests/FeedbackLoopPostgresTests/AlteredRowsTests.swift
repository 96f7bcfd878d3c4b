#if Postgres
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
/// never a trap, never a record read from the wrong bytes, never an event skipped.
@Suite("PostgreSQL: rows altered by another tool", .enabled(if: Server.url != nil, Server.skipReason))
struct AlteredRowsTests {
    /// `operation` throws `JournalError.malformedValue` for `loop`, `sequence` and `column`, with
    /// `found` in what it found.
    static func expectMalformed(
        sequence: UInt64?, column: String, found: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ operation: () async throws -> Void
    ) async {
        do {
            try await operation()
            Issue.record("no error; expected \(column) to be malformed", sourceLocation: sourceLocation)
        } catch JournalError.malformedValue(let loop, let reportedSequence, let reportedColumn, let reportedFound) {
            #expect(loop == "altered", sourceLocation: sourceLocation)
            #expect(reportedSequence == sequence, sourceLocation: sourceLocation)
            #expect(reportedColumn == column, sourceLocation: sourceLocation)
            #expect(reportedFound.contains(found), "'\(reportedFound)' does not say \(found)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(String(reflecting: error)) is not JournalError.malformedValue", sourceLocation: sourceLocation)
        }
    }

    /// `operation` throws `JournalError.unavailable` naming the loop and every one of `words`:
    /// a column altered so that the journal's own query fails on the server.
    static func expectUnavailable(naming words: [String], sourceLocation: SourceLocation = #_sourceLocation, _ operation: () async throws -> Void) async {
        do {
            try await operation()
            Issue.record("no error; expected one naming \(words)", sourceLocation: sourceLocation)
        } catch JournalError.unavailable(let reason) {
            for word in ["'altered'"] + words {
                #expect(reason.contains(word), "'\(reason)' does not name \(word)", sourceLocation: sourceLocation)
            }
        } catch {
            Issue.record("\(String(reflecting: error)) is not JournalError.unavailable", sourceLocation: sourceLocation)
        }
    }

    /// A numeric sequence still compares with the query's bound, so the row reaches the journal.
    @Test func anEventSequenceStoredAsNumeric() async throws {
        try await IsolatedStore.with { store in
            _ = try await store.fill("altered")
            try await store.execute("ALTER TABLE feedbackloop_events ALTER COLUMN sequence TYPE NUMERIC")
            await Self.expectMalformed(sequence: nil, column: "feedbackloop_events.sequence", found: "numeric") {
                _ = try await store.journal.events(loop: "altered", after: 0, limit: 10)
            }
        }
    }

    /// A text sequence no longer compares with the query's bound: the server's error, with the loop.
    @Test func anEventSequenceStoredAsText() async throws {
        try await IsolatedStore.with { store in
            _ = try await store.fill("altered")
            try await store.execute("ALTER TABLE feedbackloop_events ALTER COLUMN sequence TYPE TEXT")
            await Self.expectUnavailable(naming: ["reading events", "text > bigint"]) {
                _ = try await store.journal.events(loop: "altered", after: 0, limit: 10)
            }
        }
    }

    /// The last event renumbered below zero falls out of the query's range: the head says it is
    /// missing, where the loop would have recovered without it.
    @Test func aNegativeEventSequence() async throws {
        try await IsolatedStore.with { store in
            _ = try await store.fill("altered")
            try await store.execute("UPDATE feedbackloop_events SET sequence = -5 WHERE sequence = 3")
            await Self.expectMalformed(sequence: 3, column: "feedbackloop_events.sequence", found: "has no row for event 3") {
                _ = try await store.journal.events(loop: "altered", after: 0, limit: 10)
            }
        }
    }

    @Test func aSchemaVersionStoredAsText() async throws {
        try await IsolatedStore.with { store in
            _ = try await store.fill("altered")
            try await store.execute("ALTER TABLE feedbackloop_events ALTER COLUMN schema_version TYPE TEXT")
            await Self.expectMalformed(sequence: 1, column: "feedbackloop_events.schema_version", found: "the text '1'") {
                _ = try await store.journal.events(loop: "altered", after: 0, limit: 10)
            }
        }
    }

    /// postgres-nio reads a `BYTEA` from any column: without a type check the record would carry
    /// the integer's eight bytes as its payload.
    @Test func aPayloadStoredAsAnInteger() async throws {
        try await IsolatedStore.with { store in
            _ = try await store.fill("altered")
            try await store.execute("ALTER TABLE feedbackloop_events ALTER COLUMN payload TYPE BIGINT USING 7")
            await Self.expectMalformed(sequence: 1, column: "feedbackloop_events.payload", found: "the integer 7") {
                _ = try await store.journal.events(loop: "altered", after: 0, limit: 10)
            }
        }
    }

    @Test func aNullPayload() async throws {
        try await IsolatedStore.with { store in
            _ = try await store.fill("altered")
            try await store.execute("ALTER TABLE feedbackloop_events ALTER COLUMN payload DROP NOT NULL")
            try await store.execute("UPDATE feedbackloop_events SET payload = NULL WHERE sequence = 2")
            await Self.expectMalformed(sequence: 2, column: "feedbackloop_events.payload", found: "NULL") {
                _ = try await store.journal.events(loop: "altered", after: 0, limit: 10)
            }
        }
    }

    @Test func aNegativeSnapshotSequence() async throws {
        try await IsolatedStore.with { store in
            _ = try await store.fill("altered")
            try await store.execute("UPDATE feedbackloop_snapshots SET sequence = -2")
            await Self.expectMalformed(sequence: nil, column: "feedbackloop_snapshots.sequence", found: "the integer -2") {
                _ = try await store.journal.latestSnapshot(loop: "altered")
            }
        }
    }

    @Test func aSnapshotPayloadStoredAsText() async throws {
        try await IsolatedStore.with { store in
            _ = try await store.fill("altered")
            try await store.execute("ALTER TABLE feedbackloop_snapshots ALTER COLUMN payload TYPE TEXT USING 'x'")
            await Self.expectMalformed(sequence: 2, column: "feedbackloop_snapshots.payload", found: "the text 'x'") {
                _ = try await store.journal.latestSnapshot(loop: "altered")
            }
        }
    }

    /// The next epoch is the stored one plus one: from a negative epoch it is still negative.
    @Test func aNegativeEpoch() async throws {
        try await IsolatedStore.with { store in
            _ = try await store.fill("altered")
            try await store.execute("UPDATE feedbackloop_leases SET epoch = -9")
            await Self.expectMalformed(sequence: nil, column: "feedbackloop_leases.epoch", found: "the integer -8") {
                _ = try await store.journal.acquire(loop: "altered")
            }
        }
    }

    /// An append that does not continue the head reads the head to say which sequence was expected.
    @Test func aNegativeHead() async throws {
        try await IsolatedStore.with { store in
            let epoch = try await store.fill("altered")
            try await store.execute("UPDATE feedbackloop_leases SET head = -3")
            await Self.expectMalformed(sequence: nil, column: "feedbackloop_leases.head", found: "the integer -3") {
                try await store.journal.append(
                    loop: "altered", epoch: epoch, events: [JournalRecord(sequence: 4, schemaVersion: 1, payload: [1])], snapshot: nil)
            }
            await Self.expectMalformed(sequence: nil, column: "feedbackloop_leases.head", found: "the integer -3") {
                _ = try await store.journal.events(loop: "altered", after: 0, limit: 10)
            }
        }
    }

    @Test func anEpochStoredAsText() async throws {
        try await IsolatedStore.with { store in
            _ = try await store.fill("altered")
            try await store.execute("ALTER TABLE feedbackloop_leases ALTER COLUMN epoch TYPE TEXT")
            await Self.expectUnavailable(naming: ["acquire", "text + integer"]) {
                _ = try await store.journal.acquire(loop: "altered")
            }
        }
    }

    @Test func anInboxPayloadStoredAsText() async throws {
        try await IsolatedStore.with { store in
            try await store.journal.deliver(5, to: "altered")
            try await store.execute("ALTER TABLE feedbackloop_inbox ALTER COLUMN payload TYPE TEXT USING 'x'")
            await Self.expectMalformed(sequence: nil, column: "feedbackloop_inbox.payload", found: "the text 'x'") {
                _ = try await store.journal.inbox(loop: "altered", limit: 10)
            }
        }
    }
}
#endif
