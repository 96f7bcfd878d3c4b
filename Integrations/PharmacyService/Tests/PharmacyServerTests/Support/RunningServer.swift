import Logging
import PharmacyServer
import ServiceLifecycle

/// A server on a free loopback port, run in a `ServiceGroup` for the length of a test body.
struct RunningServer: Sendable {
    let server: PharmacyServer
    let group: ServiceGroup
    let port: Int
    var api: APIClient { APIClient(host: PharmacyServer.host, port: port) }

    static var quiet: Logger {
        var logger = Logger(label: "PharmacyServerTests")
        logger.logLevel = .critical
        return logger
    }

    /// Runs `body` with a server made of these parts, then shuts it down gracefully (if `body`
    /// did not) and waits for it to end.
    static func with(
        sessions: PharmacySessions.Configuration,
        limits: PharmacyServer.Limits = .init(),
        _ body: (RunningServer) async throws -> Void
    ) async throws {
        let listening = ValueGate<Int>()
        let server = PharmacyServer(
            configuration: .init(port: 0, sessions: sessions, limits: limits, logger: quiet),
            onListening: { listening.open(with: $0) })
        let group = ServiceGroup(services: [server], logger: quiet)
        try await withThrowingTaskGroup(of: Void.self) { running in
            running.addTask { try await group.run() }
            try await body(RunningServer(server: server, group: group, port: await listening.value))
            await group.triggerGracefulShutdown()
            try await running.waitForAll()
        }
    }
}
