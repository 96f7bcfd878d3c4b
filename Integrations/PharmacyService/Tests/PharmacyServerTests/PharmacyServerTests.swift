import FeedbackExamples
import FeedbackLoop
import Foundation
import Logging
import NIOCore
import PharmacyServer
import ServiceLifecycle
import Testing

/// The server on a free loopback port, driven by a real HTTP client. Waits are on responses and
/// continuations; the time limit only turns a hang into a failure.
@Suite(.timeLimit(.minutes(2)))
struct PharmacyServerTests {
    static let saved = FakePharmaciesService.sampleSaved
    static let superdrug = Pharmacy(FakePharmaciesService.sampleMapPlaces[1])

    static var quiet: Logger {
        var logger = Logger(label: "PharmacyServerTests")
        logger.logLevel = .critical
        return logger
    }

    @Test("50 concurrent sessions; graceful shutdown loses no accepted event", arguments: Backend.allCases)
    func concurrentSessionsAndGracefulShutdown(backend: Backend) async throws {
        let saves = Gate()
        let ended = Delivery<(String, PharmacySessions.Report)>()
        let listening = ValueGate<Int>()
        let server = PharmacyServer(
            configuration: .init(
                port: 0,
                sessions: .init(
                    backend: backend,
                    gracePeriod: .seconds(60),
                    makeService: { _ in GatedPharmaciesService(saves: saves) },
                    onSessionEnded: { id, report in ended.deliver((id, report)) },
                    logger: Self.quiet),
                logger: Self.quiet),
            onListening: { listening.open(with: $0) })
        let group = ServiceGroup(services: [server.application], logger: Self.quiet)
        let ids = (0..<50).map { "session-\($0)" }

        try await withThrowingTaskGroup(of: Void.self) { running in
            running.addTask { try await group.run() }
            let api = APIClient(host: PharmacyServer.host, port: await listening.value)

            try await withThrowingTaskGroup(of: Void.self) { sessions in
                for id in ids {
                    sessions.addTask {
                        let opened = try await api.open(id)
                        #expect(opened.status == .created)
                        #expect(try opened.decoded().state == .loaded(Self.saved, nil))

                        let searching = try await api.post(id, .addPharmacy)
                        #expect(try searching.decoded().state == .searching(Self.saved))
                        #expect(try searching.decoded().route == "show map")

                        // Accepted and reduced: the answer is the state right after the event. The
                        // save it starts waits at the gate until shutdown has begun.
                        let adding = try await api.post(id, .pickPlace(reference: Self.superdrug.reference))
                        #expect(adding.status == .ok)
                        #expect(try adding.decoded().state == .adding(Self.saved, Self.superdrug))
                    }
                }
                try await sessions.waitForAll()
            }
            #expect(server.sessions.count == 50)
            #expect(ended.values.isEmpty)

            running.addTask { await group.triggerGracefulShutdown() }
            await server.sessions.waitUntilDraining()
            // The HTTP server stopped before the sessions began to drain: a new connection is
            // refused, not merely answered with an error.
            await #expect {
                _ = try await api.get(ids[0])
            } throws: { error in
                (error as? IOError)?.errnoCode == ECONNREFUSED
            }
            #expect(ended.values.isEmpty, "every session waits for its save")
            saves.open()
            try await running.waitForAll()
        }

        let reports = ended.values
        #expect(Set(reports.map(\.0)) == Set(ids))
        #expect(reports.count == 50)
        for (id, report) in reports {
            #expect(report.ending == .drained, "\(id)")
            #expect(report.finalState == .loaded(Self.saved + [Self.superdrug], nil), "\(id)")
            #expect(report.eventsRefused == 0, "\(id)")
        }
    }

    @Test("routes, errors and the session lifecycle", arguments: Backend.allCases)
    func routesAndErrors(backend: Backend) async throws {
        let listening = ValueGate<Int>()
        let server = PharmacyServer(
            configuration: .init(
                port: 0,
                sessions: .init(
                    backend: backend,
                    maximumSessions: 1,
                    makeService: { _ in FakePharmaciesService(saved: Self.saved) },
                    logger: Self.quiet),
                logger: Self.quiet),
            onListening: { listening.open(with: $0) })
        let group = ServiceGroup(services: [server.application], logger: Self.quiet)

        try await withThrowingTaskGroup(of: Void.self) { running in
            running.addTask { try await group.run() }
            let api = APIClient(host: PharmacyServer.host, port: await listening.value)

            let health = try await api.send(.GET, "/health")
            #expect(health.status == .ok)
            #expect(health.body == "ok")

            #expect(try await api.get("alice").status == .notFound)
            #expect(try await api.post("alice", .addPharmacy).status == .notFound)
            #expect(try await api.open("not%20valid").status == .badRequest)

            #expect(try await api.open("alice").status == .created)
            let again = try await api.open("alice")
            #expect(again.status == .ok)
            #expect(try again.decoded().state == .loaded(Self.saved, nil))
            #expect(try await api.open("bob").status == .serviceUnavailable, "one session at most")

            let unknownType = try await api.send(.POST, "/sessions/alice/events", json: #"{"type": "fly"}"#)
            #expect(unknownType.status == .badRequest)
            let notJSON = try await api.send(.POST, "/sessions/alice/events", json: "add a pharmacy")
            #expect(notJSON.status == .badRequest)
            #expect(try await api.post("alice", .addPharmacy).status == .ok)
            let nowhere = try await api.post("alice", .pickPlace(reference: "atlantis"))
            #expect(nowhere.status == .badRequest)
            #expect(try await api.get("alice").decoded().state == .searching(Self.saved), "a refused request changes nothing")

            let closedMap = try await api.post("alice", .closeMap)
            #expect(try closedMap.decoded().state == .loaded(Self.saved, nil))
            let delivery = try await api.post("alice", .select(index: 1, selection: .dismiss))
            #expect(try delivery.decoded().state.isDismissing)
            #expect(try delivery.decoded().route == "dismiss with Day Lewis")

            let closed = try await api.send(.DELETE, "/sessions/alice")
            #expect(closed.status == .ok)
            #expect(try closed.decoded().state.isDismissing)
            #expect(try await api.get("alice").status == .notFound)
            #expect(try await api.send(.DELETE, "/sessions/alice").status == .notFound)
            #expect(try await api.open("bob").status == .created, "closing alice made room")

            await group.triggerGracefulShutdown()
            try await running.waitForAll()
        }
    }
}
