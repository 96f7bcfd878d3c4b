#if Postgres
import FeedbackLoopPostgres
import Foundation
import PostgresNIO
import Testing

/// The server the tests use: `FEEDBACKLOOP_POSTGRES_URL`, set by `.ci/postgres.sh`.
enum Server {
    static let url = ProcessInfo.processInfo.environment["FEEDBACKLOOP_POSTGRES_URL"]
    static let skipReason: Comment =
        "FEEDBACKLOOP_POSTGRES_URL is not set: run `.ci/postgres.sh swift test --package-path Benchmarks --traits Postgres --filter FeedbackBenchPostgresTests` (it starts a server)"

    /// One running client for the whole test process.
    static let client: PostgresClient = {
        guard let url, let configuration = try? PostgresJournal.configuration(url: url) else {
            fatalError("FEEDBACKLOOP_POSTGRES_URL is not a usable postgres:// URL: \(url ?? "unset")")
        }
        let client = PostgresClient(configuration: configuration)
        Task.detached { await client.run() }
        return client
    }()
}
#endif
