import FeedbackExamples
import FeedbackLoop
import FeedbackLoopDurable
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

    static func sessions(
        backend: Backend, journal path: String, maximumSessions: Int = 10_000, idleTimeout: Duration? = .seconds(1800),
        onSessionEnded: @escaping @Sendable (String, PharmacySessions.Report) async -> Void = { _, _ in }
    ) throws -> PharmacySessions.Configuration {
        .init(
            backend: backend, maximumSessions: maximumSessions, idleTimeout: idleTimeout,
            makeService: { _ in FakePharmaciesService(saved: FakePharmaciesService.sampleSaved, latency: .zero) },
            onSessionEnded: onSessionEnded, logger: RunningServer.quiet, journal: try .sqlite(path: path))
    }

    /// A fresh directory for one test's journal, removed by `body`'s end.
    static func withJournalPath<T>(_ name: String, _ body: (String) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pharmacy-\(name)-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory.appendingPathComponent("sessions.sqlite").path)
    }

    /// The probe: with a journal, a PUT racing a DELETE of a new id was answered 409
    /// `session_closed` while the DELETE answered 404 and the session was open afterwards (43 of
    /// 60 rounds), or 404, which the API does not list for PUT; a DELETE's final state missed a
    /// POST answered 200 and journaled before the close (19 of 60); and two PUTs of a new id could
    /// both answer 201. Each round checks that the
    /// answers agree with each other and with what the server holds afterwards.
    @Test("racing requests with a journal: every answer describes what was journaled", arguments: Backend.allCases)
    func racingAnswersAgreeWithTheJournal(backend: Backend) async throws {
        let saved = FakePharmaciesService.sampleSaved
        try await Self.withJournalPath("races-\(backend)") { path in
            try await RunningServer.with(sessions: try Self.sessions(backend: backend, journal: path)) { running in
                let api = running.api
                var outcomes: [String: Int] = [:]
                for round in 0..<40 {
                    // A PUT racing a DELETE of an id never opened.
                    let id = "put-delete-\(round)"
                    async let put = api.open(id)
                    async let delete = api.send(.DELETE, "/sessions/\(id)")
                    let (opened, closed) = try await (put, delete)
                    let after = try await api.get(id)
                    outcomes["PUT \(opened.status.code), DELETE \(closed.status.code)", default: 0] += 1
                    let answers = "round \(round): PUT \(opened.status) \(opened.body); DELETE \(closed.status) \(closed.body); then GET \(after.status)"
                    #expect([.created, .conflict].contains(opened.status), "\(answers)")
                    #expect([.ok, .notFound].contains(closed.status), "\(answers)")
                    if opened.status == .conflict {
                        #expect(opened.errorCode == "session_closed" && closed.status == .ok, "\(answers)")
                    }
                    // A DELETE that found nothing came before the PUT's open: the session stays.
                    if closed.status == .notFound {
                        #expect(opened.status == .created && after.status == .ok, "\(answers)")
                    }
                    // A DELETE that closed it came after the open: the session is gone.
                    if closed.status == .ok {
                        #expect(after.status == .notFound, "\(answers)")
                    }

                    // Two PUTs of a new id: one opened it, the other found it open.
                    let both = "put-put-\(round)"
                    async let first = api.open(both)
                    async let second = api.open(both)
                    let openers = try await [first, second]
                    outcomes["PUT \(openers.map { "\($0.status.code)" }.sorted().joined(separator: "+"))", default: 0] += 1
                    #expect(openers.map(\.status.code).sorted() == [200, 201], "round \(round): \(openers.map { "\($0.status) \($0.body)" })")

                    // A POST racing a DELETE of an open session.
                    let other = "post-delete-\(round)"
                    #expect(try await api.open(other).status == .created)
                    async let post = api.send(.POST, "/sessions/\(other)/events", json: #"{"type": "addPharmacy", "request": 1}"#)
                    async let close = api.send(.DELETE, "/sessions/\(other)")
                    let (posted, ended) = try await (post, close)
                    outcomes["POST \(posted.status.code), DELETE \(ended.status.code)", default: 0] += 1
                    let race = "round \(round): POST \(posted.status) \(posted.body); DELETE \(ended.status) \(ended.body)"
                    #expect(ended.status == .ok, "\(race)")
                    guard ended.status == .ok else { continue }
                    let final = try ended.decoded()
                    if posted.status == .ok {
                        // Answered 200: journaled, so either before the close (in its final
                        // state) or the close would have left it unapplied.
                        #expect(final.journal?.requests == 1 && final.state == .searching(saved), "\(race)")
                    } else {
                        #expect(posted.status == .notFound && posted.errorCode == "session_not_found", "\(race)")
                        #expect(final.journal?.requests == 0 && final.state == .loaded(saved, nil), "\(race)")
                    }
                    #expect(try await api.get(other).status == .notFound, "\(race)")
                }
                print("racing requests with a journal (\(backend)), 40 rounds each: \(outcomes.sorted { $0.key < $1.key })")
            }
        }
    }

    /// The probe: 3,000 requests for ids never opened wrote 3,000 rows, never removed.
    @Test("requests for ids never opened write nothing and take no room", arguments: Backend.allCases)
    func unknownIdsWriteNothing(backend: Backend) async throws {
        try await Self.withJournalPath("unknown-\(backend)") { path in
            try await RunningServer.with(sessions: try Self.sessions(backend: backend, journal: path, maximumSessions: 1)) { running in
                let api = running.api
                for index in 0..<50 {
                    let id = "nobody-\(index)"
                    for reply in [
                        try await api.get(id), try await api.post(id, .addPharmacy), try await api.send(.DELETE, "/sessions/\(id)"),
                    ] {
                        #expect(reply.status == .notFound && reply.errorCode == "session_not_found", "\(id): \(reply.status) \(reply.body)")
                    }
                }
                #expect(running.server.sessions.count == 0)
                // At the cap too: an id that is nowhere is not found, not refused.
                #expect(try await api.open("alice").status == .created)
                for id in ["nobody-0", "stranger"] {
                    let reply = try await api.get(id)
                    #expect(reply.status == .notFound && reply.errorCode == "session_not_found", "at the cap, \(id): \(reply.status) \(reply.body)")
                }
                #expect(running.server.sessions.count == 1)
                let refused = try await api.open("bob")
                #expect(refused.status == .serviceUnavailable && refused.errorCode == "too_many_sessions", "\(refused.body)")
            }
            // Nothing was written for them: taking one over is the first ownership of its id.
            let journal = try SQLiteJournal(path: path)
            for index in [0, 25, 49] {
                #expect(try await journal.acquire(loop: "nobody-\(index)") == 1, "nobody-\(index) has a row")
            }
        }
    }

    /// The probe: with a journal an expired session came back on its next request (200), where
    /// the API says an expired session is gone (404).
    @Test("an expired session is closed in the journal: 404, in this server and the next", arguments: Backend.allCases)
    func expiredSessionsAreGone(backend: Backend) async throws {
        let ended = Delivery<(String, PharmacySessions.Report)>()
        try await Self.withJournalPath("expiry-\(backend)") { path in
            let sessions = try Self.sessions(
                backend: backend, journal: path, idleTimeout: .milliseconds(300),
                onSessionEnded: { id, report in ended.deliver((id, report)) })
            try await RunningServer.with(sessions: sessions) { running in
                let api = running.api
                // Nothing more is asked of it: a request after the open could come after the expiry.
                #expect(try await api.open("alice").status == .created)
                try await bounded("the idle session to expire", diagnostics: { running.diagnostics }) {
                    try await ended.waitForCount(1)
                }
                #expect(ended.values.first?.0 == "alice")
                #expect(ended.values.first?.1.finalState == .loaded(FakePharmaciesService.sampleSaved, nil))
                let gone = try await api.get("alice")
                #expect(gone.status == .notFound && gone.errorCode == "session_not_found", "\(gone.body)")
            }
            // The next server finds it closed in the journal, and opens it anew.
            try await RunningServer.with(sessions: try Self.sessions(backend: backend, journal: path)) { running in
                let recovered = try await running.api.get("alice")
                #expect(recovered.status == .notFound, "\(recovered.body)")
                let reopened = try await running.api.open("alice")
                #expect(reopened.status == .created && (try? reopened.decoded().journal?.requests) == 0, "\(reopened.body)")
            }
        }
    }

    /// The probe: PostgreSQL unreachable at start, the server reported healthy and its first
    /// session request answered 503 only after 67 s.
    @Test("an unreachable PostgreSQL: /health and session requests answer 503 journal_unavailable within 2 s")
    func unreachablePostgres() async throws {
        // Nothing listens on port 1 of the loopback: every connection is refused.
        let journal = try SessionJournal.postgres(
            url: "postgres://pharmacy@127.0.0.1:1/pharmacy", node: "unreachable", leaseDuration: .seconds(3),
            logger: RunningServer.quiet)
        let sessions = PharmacySessions.Configuration(
            makeService: { _ in FakePharmaciesService(saved: FakePharmaciesService.sampleSaved, latency: .zero) },
            logger: RunningServer.quiet, journal: journal)
        try await RunningServer.with(sessions: sessions) { running in
            // Well past the journal's 2-second bound, well short of the probe's 67 s.
            var api = running.api
            api.timeout = .seconds(15)
            let start = ContinuousClock.now
            let health = try await api.send(.GET, "/health")
            #expect(health.status == .serviceUnavailable && health.errorCode == "journal_unavailable", "\(health.status) \(health.body)")
            let opened = try await api.open("alice")
            #expect(opened.status == .serviceUnavailable && opened.errorCode == "journal_unavailable", "\(opened.status) \(opened.body)")
            let found = try await api.get("alice")
            #expect(found.status == .serviceUnavailable && found.errorCode == "journal_unavailable", "\(found.status) \(found.body)")
            print("unreachable PostgreSQL: /health, PUT and GET answered 503 in \(ContinuousClock.now - start)")
        }
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
