#if Postgres
import FeedbackLoopDurable
import FeedbackLoopPostgres
import Foundation
import PostgresNIO
import Testing

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A TCP port on loopback that accepts connections (the kernel completes them into its backlog)
/// and never says a word: a database that is paused, or a proxy whose database is gone.
final class SilentListener: Sendable {
    let port: Int
    private let socket: Int32

    init() throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw JournalError.unavailable("socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) }
        }
        guard bound == 0, listen(socket, 64) == 0 else {
            close(socket)
            throw JournalError.unavailable("bind() or listen() failed: errno \(errno)")
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        self.socket = socket
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(socket) }
}

/// PostgreSQL that cannot be used: every operation fails within the journal's connection timeout,
/// and the health check within its own, where postgres-nio alone would keep a request waiting
/// for over a minute (the issue's first session request answered after 67 s).
@Suite("PostgreSQL unreachable")
struct UnreachableServerTests {
    /// What "fast" means here: well under the minute postgres-nio alone keeps a request waiting
    /// (the failure this suite guards), and far enough above the journal's own sub-second timeouts
    /// that the whole test suite running beside it on a two-core machine, which has delayed these
    /// operations to several seconds, does not trip it.
    static let fast = Duration.seconds(30)

    /// A running client of `url`'s server, for `body`; its connections are dropped afterwards.
    static func withClient(_ url: String, _ body: (PostgresClient) async throws -> Void) async throws {
        let client = PostgresClient(configuration: try PostgresJournal.configuration(url: url, connectTimeout: .seconds(1)))
        let running = Task { await client.run() }
        defer { running.cancel() }
        try await body(client)
    }

    /// The journal's error, within `limit`: a `JournalError.unavailable(_:)` naming `words`.
    static func expectUnavailable(
        within limit: Duration, naming words: [String], sourceLocation: SourceLocation = #_sourceLocation,
        _ operation: @escaping @Sendable () async throws -> Void
    ) async {
        let start = ContinuousClock.now
        do {
            try await Bounded.wait(limit, for: "the journal to give up") { try await operation() }
            Issue.record("no error", sourceLocation: sourceLocation)
        } catch JournalError.unavailable(let reason) {
            for word in words {
                #expect(reason.contains(word), "'\(reason)' does not name \(word)", sourceLocation: sourceLocation)
            }
        } catch {
            Issue.record("\(String(reflecting: error)) is not JournalError.unavailable", sourceLocation: sourceLocation)
        }
        #expect(start.duration(to: .now) < limit, sourceLocation: sourceLocation)
    }

    @Test func aURLsConfigurationConnectsWithinFiveSecondsByDefault() throws {
        let configuration = try PostgresJournal.configuration(url: "postgres://u@127.0.0.1/db")
        #expect(configuration.options.connectTimeout == .seconds(5))
        let quicker = try PostgresJournal.configuration(url: "postgres://u@127.0.0.1/db", connectTimeout: .milliseconds(250))
        #expect(quicker.options.connectTimeout == .milliseconds(250))
    }

    /// Nothing listens on port 1: connections are refused, and the pool retries them for a minute.
    @Test func aRefusedConnectionFailsTheFirstOperationFast() async throws {
        try await Self.withClient("postgres://feedbackloop@127.0.0.1:1/feedbackloop") { client in
            let journal = PostgresJournal(client: client, node: "refused", connectionTimeout: .milliseconds(500))
            await Self.expectUnavailable(within: Self.fast, naming: ["'session-1'", "no connection to PostgreSQL within"]) {
                _ = try await journal.acquire(loop: "session-1")
            }
            await Self.expectUnavailable(within: Self.fast, naming: ["'session-1'", "no connection"]) {
                _ = try await journal.events(loop: "session-1", after: 0, limit: 10)
            }
        }
    }

    @Test func aSilentServerFailsTheFirstOperationFast() async throws {
        let listener = try SilentListener()
        try await Self.withClient("postgres://feedbackloop@127.0.0.1:\(listener.port)/feedbackloop") { client in
            let journal = PostgresJournal(client: client, node: "silent", connectionTimeout: .milliseconds(500))
            await Self.expectUnavailable(within: Self.fast, naming: ["'session-1'", "no connection to PostgreSQL within"]) {
                _ = try await journal.acquire(loop: "session-1")
            }
        }
    }

    @Test func theHealthCheckAnswersWithinItsTimeout() async throws {
        let listener = try SilentListener()
        for url in ["postgres://feedbackloop@127.0.0.1:1/feedbackloop", "postgres://feedbackloop@127.0.0.1:\(listener.port)/feedbackloop"] {
            try await Self.withClient(url) { client in
                // A long connection timeout: the check's own timeout is what bounds it.
                let journal = PostgresJournal(client: client, node: "health", connectionTimeout: .seconds(60))
                await Self.expectUnavailable(within: Self.fast, naming: ["health check", "no connection to PostgreSQL within 0.3 seconds"]) {
                    try await journal.checkHealth(timeout: .milliseconds(300))
                }
            }
        }
    }

    @Test(.enabled(if: Server.url != nil, Server.skipReason))
    func theHealthCheckPassesOnALiveServer() async throws {
        let took = try await Server.journal().checkHealth()
        #expect(took < .seconds(2))
    }

    /// Connected, and then the database stops answering: the backend process serving the
    /// client's connection is stopped (SIGSTOP), and the check still answers within its timeout.
    @Test(.enabled(if: Server.url != nil, Server.skipReason))
    func theHealthCheckAnswersWhenTheServerStopsAnswering() async throws {
        let name = "health-\(UInt64.random(in: 0...UInt64.max))"
        var configuration = try PostgresJournal.configuration(url: try #require(Server.url))
        configuration.options.additionalStartupParameters.append(("application_name", name))
        let client = PostgresClient(configuration: configuration)
        let running = Task { await client.run() }
        defer { running.cancel() }
        let journal = PostgresJournal(client: client, node: "health")
        // Its one connection, idle in the pool, is the one the next check leases.
        try await journal.checkHealth()
        var backend: Int32?
        for try await pid in try await Server.client.query(
            "SELECT pid FROM pg_stat_activity WHERE application_name = \(name)"
        ).decode(Int32.self) { backend = pid }
        let pid = try #require(backend)
        try #require(kill(pid, SIGSTOP) == 0)
        defer { kill(pid, SIGCONT) }
        await Self.expectUnavailable(within: Self.fast, naming: ["health check", "connected, but PostgreSQL did not answer"]) {
            try await journal.checkHealth(timeout: .milliseconds(300))
        }
    }
}
#endif
