import Logging
import PharmacyServer
import ServiceLifecycle

/// A server on a free loopback port, run in a `ServiceGroup` for the length of a test body.
///
/// Every wait on it is bounded (see ``bounded(_:within:diagnostics:_:)``) and names what it
/// waited for, with ``diagnostics`` — the sessions and their loops — so a server that does not
/// start, drain or stop fails the test with a description instead of hanging the suite.
struct RunningServer: Sendable {
    let server: PharmacyServer
    let group: ServiceGroup
    let port: Int
    /// `group.run()`, in a task of its own so that a server that never stops cannot hold the
    /// test (a task group would wait for it without bound).
    private let running: Task<Void, any Error>

    var api: APIClient { APIClient(host: PharmacyServer.host, port: port) }

    static var quiet: Logger {
        var logger = Logger(label: "PharmacyServerTests")
        logger.logLevel = .critical
        return logger
    }

    /// The server did not start.
    struct StartFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts a server made of these parts and returns once it listens.
    ///
    /// - Throws: What the server's `run()` threw if it ended before listening (a port in use),
    ///   or ``WaitTimedOut`` if it neither listened nor ended in time.
    static func start(
        sessions: PharmacySessions.Configuration,
        limits: PharmacyServer.Limits = .init()
    ) async throws -> RunningServer {
        let listening = ValueGate<Result<Int, any Error>>()
        let server = PharmacyServer(
            configuration: .init(port: 0, sessions: sessions, limits: limits, logger: quiet),
            onListening: { listening.open(with: .success($0)) })
        let group = ServiceGroup(services: [server], logger: quiet)
        let running = Task {
            do {
                try await group.run()
                listening.open(with: .failure(StartFailure(description: "the server stopped before it listened")))
            } catch {
                listening.open(with: .failure(error))
                throw error
            }
        }
        do {
            let port = try await bounded("the server to listen on a loopback port") { try await listening.value }.get()
            return RunningServer(server: server, group: group, port: port, running: running)
        } catch {
            running.cancel()
            throw error
        }
    }

    /// Runs `body` with a server made of these parts, then shuts it down gracefully (if `body`
    /// did not) and waits, bounded, for it to end.
    ///
    /// If `body` throws, the server is cancelled (not drained) and its end awaited, bounded, and
    /// the error rethrown; a server that does not end then fails the test with
    /// ``WaitTimedOut``, naming the original error, rather than hanging it.
    static func with(
        sessions: PharmacySessions.Configuration,
        limits: PharmacyServer.Limits = .init(),
        _ body: (RunningServer) async throws -> Void
    ) async throws {
        let running = try await start(sessions: sessions, limits: limits)
        do {
            try await body(running)
        } catch {
            try await running.cancel(after: error)
            throw error
        }
        try await running.shutDown()
    }

    /// Begins a graceful shutdown (a no-op if one began) and waits, bounded, for the server to end.
    func shutDown() async throws {
        await group.triggerGracefulShutdown()
        try await waitUntilEnded()
    }

    /// Waits, bounded, for the server's `run()` to return, after a shutdown the test began.
    ///
    /// - Throws: What the server's `run()` threw, or ``WaitTimedOut`` with ``diagnostics``.
    func waitUntilEnded(within limit: Duration = waitLimit) async throws {
        let running = self.running
        try await bounded("the server to end (its sessions drained or stopped)", within: limit, diagnostics: { diagnostics }) {
            try await running.value
        }
    }

    /// After `error` ended a test body: cancels the server and waits, bounded, for it to end.
    /// Its own failure to end is the one reported (with `error` named); an error it throws as it
    /// ends is not, `error` is.
    private func cancel(after error: any Error) async throws {
        running.cancel()
        do {
            try await waitUntilEnded()
        } catch let timeout as WaitTimedOut {
            throw WaitTimedOut(
                what: timeout.what + " after the test failed with \(error)", limit: timeout.limit,
                diagnostics: timeout.diagnostics)
        } catch {}
    }

    /// The sessions as they are now, for a failure message: the registry's counters and each
    /// open session's loop (whether it takes events, its counters, its state).
    var diagnostics: String { Self.diagnostics(of: server.sessions) }

    static func diagnostics(of sessions: PharmacySessions) -> String {
        let registry = sessions.registry
        var lines = ["sessions: \(registry.statistics); accepting new ones: \(registry.isAcceptingLoops)"]
        for id in registry.ids.sorted() {
            // `existing` counts as a use; harmless in a failure message.
            guard let session = registry.existing(id) else {
                lines.append("  \(id): ending")
                continue
            }
            lines.append(
                "  \(id): accepting events: \(session.isAcceptingEvents); \(session.loop.statistics); state: \(session.loop.state)")
        }
        return lines.joined(separator: "\n")
    }
}
