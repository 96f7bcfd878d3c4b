import FeedbackExamples
import FeedbackLoop
import Foundation
import PharmacyServer
import Testing

/// Hostile but fair clients: many silent connections, heads and bodies that trickle, more
/// connections than the cap. Raw TCP connections from this process; waits are on the server's
/// answers and closes, bounded so that a server that never closes fails rather than hangs.
// Serialized: the 3,000-connection test would otherwise starve the timing of the cap test.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ConnectionLimitTests {
    static func sessions() -> PharmacySessions.Configuration {
        .init(makeService: { _ in FakePharmaciesService(saved: FakePharmaciesService.sampleSaved, latency: .zero) },
              logger: RunningServer.quiet)
    }

    /// The probe: 20,000 silent connections used every file descriptor and /health stopped
    /// answering. A few thousand here, under the default cap (4,096).
    @Test("/health answers while 3,000 silent connections are open")
    func healthUnderManyIdleConnections() async throws {
        try await RunningServer.with(sessions: Self.sessions(), limits: .init(idleTimeout: .seconds(60))) { running in
            let start = ContinuousClock.now
            let idle = try await RawConnections.open(3_000, port: running.port)
            defer { idle.closeAll() }
            let health = try await running.api.send(.GET, "/health")
            #expect(health.status == .ok)
            #expect(health.body == "ok")
            #expect(try await running.api.open("alice").status == .created)
            #expect(idle.allStillOpen(), "the idle timeout is 60 s: the server keeps them")
            print("3,000 idle connections opened and /health answered in \(ContinuousClock.now - start)")
        }
    }

    /// The probe: 300 slowloris connections (1 byte/s) were all still open after 30 s.
    @Test("silent connections and trickling heads are closed after the idle timeout")
    func idleTimeoutClosesSilentAndSlowConnections() async throws {
        try await RunningServer.with(sessions: Self.sessions(), limits: .init(idleTimeout: .milliseconds(500))) { running in
            let silent = try await RawConnections.open(200, port: running.port)
            // Half a request head, never finished: Hummingbird counts only complete parts as
            // activity, so these time out like silent ones.
            let slow = try await RawConnections.open(
                200, port: running.port, sending: "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
            _ = try await silent.waitUntilServerClosesAll(timeout: .seconds(20))
            _ = try await slow.waitUntilServerClosesAll(timeout: .seconds(20))
            #expect(try await running.api.send(.GET, "/health").status == .ok)
        }
    }

    @Test("a body that does not arrive within the read timeout is answered 408 and the connection closed")
    func readTimeout() async throws {
        try await RunningServer.with(
            sessions: Self.sessions(), limits: .init(idleTimeout: .seconds(60), readTimeout: .milliseconds(300))
        ) { running in
            #expect(try await running.api.open("alice").status == .created)
            // Two bytes of the ten announced, then nothing: the idle timeout (60 s) would not end
            // it; the read timeout does.
            let trickle = try await RawConnections.open(
                1, port: running.port,
                sending: "POST /sessions/alice/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Content-Type: application/json\r\nContent-Length: 10\r\n\r\n{\"")
            let received = try await trickle.waitUntilServerClosesAll(timeout: .seconds(20))
            let answer = try #require(received.first)
            #expect(answer.hasPrefix("HTTP/1.1 408"), "\(answer)")
            #expect(answer.contains(#""code":"request_timeout""#), "\(answer)")
        }
    }

    @Test("past the connection cap new connections wait until one closes, then are served")
    func connectionCap() async throws {
        try await RunningServer.with(
            sessions: Self.sessions(), limits: .init(maximumConnections: 20, idleTimeout: .seconds(60))
        ) { running in
            let idle = try await RawConnections.open(20, port: running.port)
            defer { idle.closeAll() }
            // The cap's 20 are held open by silent clients; a 21st connection is not accepted
            // until one of them closes. Two seconds without an answer is the evidence (a server
            // that ignored the cap answers within milliseconds); it cannot fail a correct
            // server, however slow.
            let answered = Gate()
            let health = Task {
                defer { answered.open() }
                return try await running.api.send(.GET, "/health")
            }
            try? await Task.sleep(for: .seconds(2))
            #expect(!answered.isOpen, "a connection past the cap was served")
            #expect(idle.allStillOpen())
            idle.close(0)
            let answer = try await bounded("the connection past the cap to be served once one closed",
                                           diagnostics: { running.diagnostics }) { try await health.value }
            #expect(answer.status == .ok)
        }
    }
}
