import ArgumentParser
import FeedbackExamples
import FeedbackLoop
import FeedbackLoopServices
import Logging
import PharmacyServer

/// `pharmacy-service`: the pharmacies example as an HTTP server on 127.0.0.1.
///
/// Malformed flags or a malformed `PHARMACY_SERVICE_PORT` print the usage and exit with 64.
@main
struct PharmacyServiceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pharmacy-service",
        abstract: "Serves the pharmacies example over HTTP on 127.0.0.1, one FeedbackLoop per session.",
        discussion: """
            SIGTERM or SIGINT shut it down gracefully: the server finishes the requests it accepted, \
            then every session stops taking events, lets its effects finish within the grace period \
            and logs its final state.
            """)

    @Option(help: "The port on 127.0.0.1; 0 picks a free one. Default: $PHARMACY_SERVICE_PORT, else 8080.")
    var port: Int?

    @Option(help: "The loop backend: callback or actor.")
    var backend: Backend = .callback

    @Option(help: "Seconds a graceful shutdown waits for each session's effects.")
    var gracePeriod: Double = 10

    @Option(help: "Milliseconds the fake pharmacies back end takes per call.")
    var latencyMs: Int = 100

    @Option(help: "How many sessions may be open at once.")
    var maximumSessions: Int = 10_000

    static let portVariable = "PHARMACY_SERVICE_PORT"

    func validate() throws {
        _ = try resolvedPort()
        guard gracePeriod >= 0, gracePeriod.isFinite else {
            throw ValidationError("--grace-period must be a number of seconds, 0 or more")
        }
        guard latencyMs >= 0 else { throw ValidationError("--latency-ms must be 0 or more") }
        guard maximumSessions >= 1 else { throw ValidationError("--maximum-sessions must be at least 1") }
    }

    private func resolvedPort() throws -> Int {
        let port: Int
        if let flag = self.port {
            port = flag
        } else if let variable = Environment.value(Self.portVariable) {
            guard let value = Int(variable) else {
                throw ValidationError("\(Self.portVariable) must be a port number, not '\(variable)'")
            }
            port = value
        } else {
            port = 8080
        }
        guard (0...65535).contains(port) else { throw ValidationError("the port must be between 0 and 65535") }
        return port
    }

    func run() async throws {
        let logger = Logger(label: "pharmacy-service")
        let latency = Duration.milliseconds(latencyMs)
        let server = PharmacyServer(
            configuration: .init(
                port: try resolvedPort(),
                sessions: .init(
                    backend: backend,
                    gracePeriod: .milliseconds(Int64(gracePeriod * 1000)),
                    maximumSessions: maximumSessions,
                    makeService: { _ in FakePharmaciesService(saved: FakePharmaciesService.sampleSaved, latency: latency) },
                    onSessionEnded: { id, report in
                        logger.info(
                            "session ended",
                            metadata: [
                                "session": "\(id)", "ending": "\(report.ending)", "state": "\(report.finalState)",
                            ])
                    },
                    metrics: LoopMetrics(label: "pharmacies"),
                    logger: logger),
                logger: logger),
            onListening: { port in
                // On stdout, so that scripts that passed --port 0 can read the port.
                print("listening on http://\(PharmacyServer.host):\(port)")
                fflush(nil)  // every stream; avoids touching the `stdout` global
            })
        try await server.application.runService()
    }
}

extension Backend: @retroactive ExpressibleByArgument {}

/// The process environment, without Foundation.
enum Environment {
    static func value(_ name: String) -> String? {
        guard let pointer = getenv(name) else { return nil }
        return String(cString: pointer)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
