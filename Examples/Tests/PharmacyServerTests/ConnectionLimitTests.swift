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

    /// `count` connections that the server serves, each left idle after one answered request:
    /// the server admits connections on several event loops, so a connection merely opened
    /// first is not known to be counted first.
    static func openServed(_ count: Int, port: Int) async throws -> RawConnections {
        let connections = try await RawConnections.open(
            count, port: port, sending: "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let answers = try await connections.receiveOnEach(until: "\r\n\r\nok", timeout: .seconds(20))
        for answer in answers {
            #expect(answer.hasPrefix("HTTP/1.1 200") && !answer.lowercased().contains("connection: close"), "\(answer)")
        }
        return connections
    }

    /// The probe: with 20,000 idle connections and the default cap, /health took 11–36 s, waiting
    /// in the kernel's backlog behind idle connections. Here the cap is 20, held by silent
    /// connections, and 200 more silent ones arrive before the probe.
    @Test("past the connection cap /health is answered at once, and silent connections past it are closed")
    func healthPastTheCap() async throws {
        try await RunningServer.with(
            sessions: Self.sessions(), limits: .init(maximumConnections: 20, idleTimeout: .seconds(60))
        ) { running in
            let held = try await Self.openServed(20, port: running.port)
            defer { held.closeAll() }
            let excess = try await RawConnections.open(200, port: running.port)
            defer { excess.closeAll() }
            var api = running.api
            // Far less than the idle timeout that would free a place under the cap (60 s).
            api.timeout = .seconds(10)
            let start = ContinuousClock.now
            let health = try await api.send(.GET, "/health")
            let elapsed = ContinuousClock.now - start
            #expect(health.status == .ok && health.body == "ok", "\(health.status) \(health.body)")
            #expect(health.headers["connection"].first == "close", "\(health.headers)")
            // Past the cap a connection gets one health check, or nothing, and is closed.
            let received = try await excess.waitUntilServerClosesAll(timeout: .seconds(20))
            #expect(received.allSatisfy { $0.isEmpty }, "silent connections past the cap are closed without an answer")
            #expect(held.allStillOpen(), "the connections under the cap stay: their idle timeout is 60 s")
            print("/health past the cap (20 held, 200 more silent): answered in \(elapsed)")
        }
    }

    @Test("past the connection cap only /health is served; past the excess a connection is closed at once")
    func pastTheCapOnlyHealthIsServed() async throws {
        try await RunningServer.with(
            sessions: Self.sessions(),
            limits: .init(maximumConnections: 2, excessConnections: 4, idleTimeout: .seconds(60))
        ) { running in
            let held = try await Self.openServed(2, port: running.port)
            let api = running.api
            let refused = try await api.open("alice")
            #expect(refused.status == .serviceUnavailable && refused.errorCode == "too_many_connections", "\(refused.body)")
            #expect(refused.headers["retry-after"].first == "1")
            #expect(try await api.send(.GET, "/health").status == .ok)
            // A place under the cap again: served as usual.
            held.close(0)
            let opened = try await bounded("a PUT once a place under the cap is free") {
                while true {
                    let reply = try await api.open("alice")
                    if reply.errorCode != "too_many_connections" { return reply }
                }
            }
            #expect(opened.status == .created, "\(opened.body)")
            held.closeAll()
        }
        try await RunningServer.with(
            sessions: Self.sessions(),
            limits: .init(maximumConnections: 2, excessConnections: 0, idleTimeout: .seconds(60))
        ) { running in
            let held = try await Self.openServed(2, port: running.port)
            defer { held.closeAll() }
            // Without an excess the third connection is closed at once, long before any timeout.
            let third = try await RawConnections.open(1, port: running.port, sending: "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let received = try await third.waitUntilServerClosesAll(timeout: .seconds(20))
            #expect(received == [""], "\(received)")
            #expect(held.allStillOpen())
        }
    }

    /// The probe: a body shorter than its Content-Length: the connection was closed without an
    /// answer. A client that ends its input gets 400; one that stalls gets 408, also when the
    /// idle timeout (here shorter than the read timeout) is what ends it.
    @Test("a body shorter than its Content-Length is answered: 400 after a half-close, 408 when it stalls")
    func bodyCutShort() async throws {
        let head = "POST /sessions/alice/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + "Content-Type: application/json\r\nContent-Length: 10\r\n\r\n{\""
        // Each with a read timeout (30 s) that the wait below does not reach.
        try await RunningServer.with(
            sessions: Self.sessions(), limits: .init(idleTimeout: .seconds(60), readTimeout: .seconds(30))
        ) { running in
            #expect(try await running.api.open("alice").status == .created)
            let ended = try await RawConnections.open(1, port: running.port, sending: head)
            ended.shutdownWrite(0)
            let answer = try #require(try await ended.waitUntilServerClosesAll(timeout: .seconds(10)).first)
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer)")
            #expect(answer.contains(#""code":"malformed_request""#), "\(answer)")
        }
        try await RunningServer.with(
            sessions: Self.sessions(), limits: .init(idleTimeout: .milliseconds(300), readTimeout: .seconds(30))
        ) { running in
            #expect(try await running.api.open("alice").status == .created)
            let stalled = try await RawConnections.open(1, port: running.port, sending: head)
            let answer = try #require(try await stalled.waitUntilServerClosesAll(timeout: .seconds(10)).first)
            #expect(answer.hasPrefix("HTTP/1.1 408"), "\(answer)")
            #expect(answer.contains(#""code":"request_timeout""#), "\(answer)")
            #expect(try await running.api.get("alice").decoded().state == .loaded(FakePharmaciesService.sampleSaved, nil),
                    "the cut request changed nothing")
        }
    }
}
