import FeedbackExamples
import FeedbackLoop
import Foundation
import NIOHTTP1
import PharmacyServer
import Testing

/// The API of a server with a SQLite journal, in process: the same routes as without one, each
/// answer after its event was journaled, and sessions that outlive the server. (`test.sh` runs it
/// with the fault tests, after the timing-sensitive HTTP tests.)
@Suite(.timeLimit(.minutes(2)))
struct DurableSessionTests {
    @Test("journal flags: conflicting, out of range or unopenable exit 64 with a message", arguments: [
        (["--journal", "a.sqlite", "--journal-postgres", "postgres://u@localhost/d"], "exclude each other"),
        (["--lease-duration", "5"], "--journal-postgres"),
        (["--journal-postgres", "postgres://u@localhost/d", "--lease-duration", "0"], "--lease-duration"),
        (["--journal-postgres", "http://localhost/d"], "not a postgres:// URL"),
        (["--journal", "/"], "the journal cannot be opened"),
    ])
    func journalFlagsAreValidated(arguments: [String], mentions: String) async throws {
        let (status, stderr) = try await CommandTests.run(arguments)
        #expect(status == 64, "\(arguments): \(stderr)")
        #expect(stderr.contains(mentions), "\(arguments): \(stderr)")
    }

    static func sessions(backend: Backend, journal path: String) throws -> PharmacySessions.Configuration {
        .init(
            backend: backend,
            makeService: { _ in FakePharmaciesService(saved: FakePharmaciesService.sampleSaved, latency: .zero) },
            logger: RunningServer.quiet, journal: try .sqlite(path: path))
    }

    @Test("open, numbered requests, unknown ids, close and reopen; a new server recovers the session", arguments: Backend.allCases)
    func lifecycleOnAJournal(backend: Backend) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pharmacy-durable-\(getpid())-\(backend)")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sessions.sqlite").path

        try await RunningServer.with(sessions: try Self.sessions(backend: backend, journal: path)) { running in
            let api = running.api
            let opened = try await api.open("alice")
            #expect(opened.status == .created, "\(opened.body)")
            let first = try opened.decoded()
            #expect(first.state == .loaded(FakePharmaciesService.sampleSaved, nil))
            #expect(first.journal?.requests == 0)
            #expect(try await api.open("alice").status == .ok)

            let added = try await api.send(.POST, "/sessions/alice/events", json: #"{"type": "addPharmacy", "request": 1}"#)
            #expect(added.status == .ok, "\(added.body)")
            #expect(try added.decoded().journal?.requests == 1 && added.decoded().journal?.lastRequest == 1)
            let unnumbered = try await api.post("alice", .closeMap)
            #expect(try unnumbered.decoded().journal?.requests == 2 && unnumbered.decoded().journal?.lastRequest == 1)
            let badNumber = try await api.send(.POST, "/sessions/alice/events", json: #"{"type": "closeMap", "request": 1.5}"#)
            #expect(badNumber.status == .badRequest && badNumber.errorCode == "invalid_event", "\(badNumber.body)")

            // An id with no open session answers 404 and leaves nothing behind in the registry.
            for unknown in ["nobody", "nobody-else"] {
                let missing = try await api.get(unknown)
                #expect(missing.status == .notFound && missing.errorCode == "session_not_found")
                let post = try await api.post(unknown, .addPharmacy)
                #expect(post.status == .notFound && post.errorCode == "session_not_found")
            }
            #expect(running.server.sessions.count == 1)

            let closed = try await api.send(.DELETE, "/sessions/alice")
            #expect(closed.status == .ok && (try? closed.decoded().journal?.requests) == 2, "\(closed.body)")
            #expect(try await api.get("alice").status == .notFound)
            let reopened = try await api.open("alice")
            #expect(reopened.status == .created && (try? reopened.decoded().journal?.requests) == 0, "\(reopened.body)")
            let again = try await api.send(.POST, "/sessions/alice/events", json: #"{"type": "addPharmacy", "request": 7}"#)
            #expect(try again.decoded().journal?.requests == 1 && again.decoded().journal?.lastRequest == 7)
        }

        // The journal outlives the server: a new one recovers the session on its first request.
        try await RunningServer.with(sessions: try Self.sessions(backend: backend, journal: path)) { running in
            let recovered = try await running.api.get("alice")
            #expect(recovered.status == .ok, "\(recovered.body)")
            let response = try recovered.decoded()
            #expect(response.state == .searching(FakePharmaciesService.sampleSaved))
            #expect(response.journal?.requests == 1 && response.journal?.lastRequest == 7)
            #expect(try await running.api.get("nobody").status == .notFound)
        }
    }
}
