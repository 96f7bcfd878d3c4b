#if Postgres
import FeedbackLoop
import FeedbackLoopDurable
import FeedbackLoopDurableTesting
import FeedbackLoopPostgres
import Foundation
import PostgresNIO
import Testing

/// A database whose tables an earlier version of the journal made — no `feature` column, no
/// append function — is brought up to date when the journal first uses it: its loops recover,
/// each takes the name of the first feature that opens it, and appends go on.
@Suite("PostgreSQL: tables of an earlier schema", .enabled(if: Server.url != nil, Server.skipReason))
struct EarlierSchemaTests {
    /// The schema as the journal made it before it recorded features.
    static let earlierSchema: [PostgresQuery] = [
        """
        CREATE TABLE feedbackloop_leases (
            loop TEXT PRIMARY KEY, owner TEXT NOT NULL, epoch BIGINT NOT NULL,
            head BIGINT NOT NULL, lease_until TIMESTAMPTZ NOT NULL)
        """,
        """
        CREATE TABLE feedbackloop_events (
            loop TEXT NOT NULL, sequence BIGINT NOT NULL, schema_version INT NOT NULL,
            payload BYTEA NOT NULL, PRIMARY KEY (loop, sequence))
        """,
        """
        CREATE TABLE feedbackloop_snapshots (
            loop TEXT NOT NULL, sequence BIGINT NOT NULL, schema_version INT NOT NULL,
            payload BYTEA NOT NULL, PRIMARY KEY (loop, sequence))
        """,
        """
        CREATE TABLE feedbackloop_inbox (
            id BIGSERIAL PRIMARY KEY, loop TEXT NOT NULL, schema_version INT NOT NULL,
            payload BYTEA NOT NULL, trace_headers TEXT)
        """,
        """
        CREATE OR REPLACE FUNCTION feedbackloop_lease_live() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.lease_until <= clock_timestamp() THEN
                RAISE EXCEPTION 'the lease ended at %, before this append could commit', NEW.lease_until
                    USING ERRCODE = 'check_violation', CONSTRAINT = 'feedbackloop_lease_live';
            END IF;
            RETURN NULL;
        END $$
        """,
        """
        CREATE CONSTRAINT TRIGGER feedbackloop_lease_live
            AFTER UPDATE OF head ON feedbackloop_leases DEFERRABLE INITIALLY DEFERRED
            FOR EACH ROW EXECUTE FUNCTION feedbackloop_lease_live()
        """,
    ]

    @Test(arguments: Backend.allCases)
    func aLoopOfTheEarlierSchemaRecoversAndIsAdopted(backend: Backend) async throws {
        let database = "feedbackloop_earlier_\(UInt64.random(in: 0...UInt64.max))"
        try await Server.execute("CREATE DATABASE \(unescaped: database)")
        var configuration = try PostgresJournal.configuration(url: try #require(Server.url))
        configuration.database = database
        let client = PostgresClient(configuration: configuration)
        let running = Task { await client.run() }
        do {
            for statement in Self.earlierSchema { for try await _ in try await client.query(statement) {} }
            let add1 = ByteBuffer(bytes: Array(try JSONEncoder().encode(Ledger.Event.add(1))))
            let add2 = ByteBuffer(bytes: Array(try JSONEncoder().encode(Ledger.Event.add(2))))
            for try await _ in try await client.query("""
                INSERT INTO feedbackloop_leases VALUES ('old', 'gone', 3, 2, now() - interval '1 second')
                """) {}
            for try await _ in try await client.query("""
                INSERT INTO feedbackloop_events VALUES ('old', 1, 1, \(add1)), ('old', 2, 1, \(add2))
                """) {}

            let journal = PostgresJournal(client: client, node: "node-\(UInt64.random(in: 0...UInt64.max))")
            let loop = try await DurableLoop(
                id: "old", journal: journal, initial: Ledger.State(), reduce: Ledger.reduce, backend: backend)
            #expect(loop.state.total == 3 && loop.recoveredSequence == 2 && loop.epoch == 4)
            #expect(try await loop.sendAndWait(.add(4)).total == 7)
            await loop.stop()

            await #expect {
                let tally = try await DurableLoop(
                    id: "old", journal: journal, initial: Tally.State(), reduce: Tally.reduce, backend: backend)
                await tally.stop()
            } throws: { error in
                guard case DurableLoopError.featureMismatch("old", let journaled, _) = error else { return false }
                return journaled == DurableConfiguration.defaultFeature(state: Ledger.State.self, event: Ledger.Event.self)
            }
            #expect(try await journal.events(loop: "old", after: 0, limit: 10).map(\.sequence) == [1, 2, 3])
        } catch {
            running.cancel()
            try? await Server.execute("DROP DATABASE \(unescaped: database) WITH (FORCE)")
            throw error
        }
        running.cancel()
        try await Server.execute("DROP DATABASE \(unescaped: database) WITH (FORCE)")
    }
}
#endif
