import FeedbackLoop
import Foundation
import NIOHTTP1
import PharmacyServer
import Testing

/// Crashes, for real: `pharmacy-service` processes with a journal, killed with SIGKILL or paused
/// with SIGSTOP, and restarted or taken over, driven over HTTP.
///
/// Each client request carries its number (`"request": n`, 1, 2, 3, … per session, each sent
/// after the previous one was answered), and a journaled session counts the requests it applied
/// and keeps the latest number. So after a crash a session's recovered `requests` and
/// `lastRequest` say exactly which requests were applied, and how often: every answered request
/// must be there (`lastRequest >= answered`), at most the one in flight at the crash besides
/// (`lastRequest <= answered + 1`), and none twice (`requests == lastRequest`).
enum FaultLoad {
    /// Opens `sessions` on `api`, each answered 201.
    static func open(_ sessions: [String], on api: APIClient) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for session in sessions {
                group.addTask {
                    let reply = try await bounded("PUT /sessions/\(session)") { try await api.open(session) }
                    #expect(reply.status == .created, "PUT \(session): \(reply.status) \(reply.body)")
                }
            }
            try await group.waitForAll()
        }
    }

    /// The body of request `number`: `addPharmacy` and `closeMap` in turn (the map opens and
    /// closes; no back-end call), numbered.
    static func body(_ number: Int) -> String {
        number % 2 == 1 ? #"{"type": "addPharmacy", "request": \#(number)}"# : #"{"type": "closeMap", "request": \#(number)}"#
    }

    /// Sends request `number` to `session` and returns the session's journal figures from the
    /// answer, or `nil` for any answer but 200.
    static func send(_ number: Int, to session: String, on api: APIClient) async throws -> (APIClient.Reply, SessionResponse.Journal?) {
        let reply = try await api.send(.POST, "/sessions/\(session)/events", json: body(number))
        guard reply.status == .ok else { return (reply, nil) }
        return (reply, try reply.decoded().journal)
    }
}

@Suite("kill -9 under load, restart on the same SQLite journal", .serialized, .timeLimit(.minutes(2)))
struct KillNineTests {
    /// 50 sessions send numbered requests as fast as their answers come back; once each has had
    /// at least 10 more answered, the server gets SIGKILL with requests in flight. A new server on
    /// the same journal recovers every session on its first request, and is killed the same way
    /// in its turn: three crashes, each checked.
    @Test(arguments: Backend.allCases)
    func everyAnsweredRequestSurvivesOnceAndOnlyOnce(backend: Backend) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pharmacy-kill9-\(getpid())-\(backend)")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let journal = directory.appendingPathComponent("sessions.sqlite").path
        let arguments = ["--latency-ms", "0", "--backend", backend.rawValue, "--journal", journal]
        let sessions = (0..<50).map { "load-\($0)" }

        try await withServerProcesses { processes in
            var server = try await processes.start(arguments)
            try await FaultLoad.open(sessions, on: server.api)
            // The next number each session sends: one past the last it applied.
            var next = Dictionary(uniqueKeysWithValues: sessions.map { ($0, 1) })
            for crash in 1...3 {
                let before = next
                let answered = try await Self.loadUntilKilled(server, sessions: sessions, from: next, crash: crash)
                server = try await processes.start(arguments)
                let api = server.api
                var inFlightApplied = 0
                for session in sessions {
                    let reply = try await bounded("GET /sessions/\(session) after restart \(crash)") { try await api.get(session) }
                    #expect(reply.status == .ok, "\(session) after restart \(crash): \(reply.status) \(reply.body)")
                    guard reply.status == .ok, let journal = try reply.decoded().journal else { continue }
                    let lastAnswered = answered[session] ?? next[session]! - 1
                    let last = journal.lastRequest ?? 0
                    #expect(last >= lastAnswered, "crash \(crash), \(session): request \(lastAnswered) was answered, the recovered session applied up to \(last)")
                    #expect(last <= lastAnswered + 1, "crash \(crash), \(session): applied up to \(last), but only \(lastAnswered + 1) were sent")
                    #expect(journal.requests == last, "crash \(crash), \(session): \(journal.requests) requests applied for numbers 1...\(last): applied twice or lost")
                    if last == lastAnswered + 1 { inFlightApplied += 1 }
                    next[session] = last + 1
                }
                let count = answered.reduce(0) { $0 + $1.value - before[$1.key]! + 1 }
                print("kill -9 #\(crash) (\(backend)): \(count) requests answered over \(sessions.count) sessions before the kill, each recovered once; \(inFlightApplied) in flight at the kill were journaled, never answered")
            }
        }
    }

    /// Sends numbered requests from `from[session]` on, each after the previous answer, until each
    /// session has 10 answered; then kills the server with SIGKILL while requests are in flight.
    /// Returns the last answered number per session (absent if none was).
    static func loadUntilKilled(
        _ server: ServerProcesses.Server, sessions: [String], from: [String: Int], crash: Int
    ) async throws -> [String: Int] {
        let minimumAnswered = 10
        let answered = Locked([String: Int]())
        let failures = Locked([String]())
        let killed = Locked(false)
        let enough = Gate()
        let load = Task {
            await withTaskGroup(of: Void.self) { group in
                for session in sessions {
                    group.addTask {
                        var number = from[session]!
                        while true {
                            do {
                                let (reply, journal) = try await FaultLoad.send(number, to: session, on: server.api)
                                guard let journal else {
                                    if !killed.withLock({ $0 }) {
                                        failures.withLock { $0.append("\(session) #\(number): \(reply.status) \(reply.body)") }
                                        enough.open()
                                    }
                                    return
                                }
                                if journal.lastRequest != number || journal.requests != number {
                                    failures.withLock {
                                        $0.append("\(session) #\(number) answered with requests \(journal.requests), last \(String(describing: journal.lastRequest))")
                                    }
                                }
                                let all = answered.withLock { answered -> [String: Int] in
                                    answered[session] = number
                                    return answered
                                }
                                if all.count == sessions.count && all.allSatisfy({ $0.value - from[$0.key]! + 1 >= minimumAnswered }) {
                                    enough.open()
                                }
                                number += 1
                            } catch {
                                // Expected once the server is dead; a failure before that is the test's.
                                if !killed.withLock({ $0 }) {
                                    failures.withLock { $0.append("\(session) #\(number): \(error)") }
                                    enough.open()
                                }
                                return
                            }
                        }
                    }
                }
            }
        }
        defer { load.cancel() }
        try await bounded(
            "each of \(sessions.count) sessions to have \(minimumAnswered) requests answered before crash \(crash)",
            diagnostics: { "answered: \(answered.withLock { $0 })" }
        ) { try await enough.wait() }
        killed.withLock { $0 = true }
        try await server.kill9()
        try await bounded("the load's requests to end after SIGKILL") { await load.value }
        let failed = failures.withLock { $0 }
        #expect(failed == [], "before crash \(crash)")
        return answered.withLock { $0 }
    }
}

/// The PostgreSQL server of the fault tests, if any.
let postgresURL = ProcessInfo.processInfo.environment["FEEDBACKLOOP_POSTGRES_URL"]

/// Two servers on loopback sharing one PostgreSQL database. They run only where a server is
/// available: `.ci/postgres.sh Examples/test.sh` starts one and sets
/// `FEEDBACKLOOP_POSTGRES_URL` (`.ci/run` does, and fails if these were skipped).
@Suite(
    "two servers on one PostgreSQL: takeover and fencing", .serialized, .timeLimit(.minutes(2)),
    .enabled(if: postgresURL != nil, "FEEDBACKLOOP_POSTGRES_URL is not set (.ci/postgres.sh sets it)"))
struct PostgresFaultTests {
    static let url = postgresURL

    /// Short, so the suite runs in seconds, yet three renewals long: a renewal would have to be
    /// late by two whole seconds on a loaded machine for a live owner to lose its session.
    static let leaseSeconds = "3"

    static func arguments(node: String, backend: Backend) throws -> [String] {
        [
            "--latency-ms", "0", "--backend", backend.rawValue, "--grace-period", "1",
            "--journal-postgres", try #require(url), "--node", node, "--lease-duration", leaseSeconds,
        ]
    }

    /// A session id no earlier run used: the database outlives a test.
    static func freshSession(_ name: String) -> String {
        "\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }

    /// Sends requests `numbers` to `session` on `api`, each answered 200 with the count it makes.
    static func sendAnswered(_ numbers: ClosedRange<Int>, to session: String, on api: APIClient, counting from: Int) async throws {
        for (offset, number) in numbers.enumerated() {
            let (reply, journal) = try await bounded("request \(number) to \(session)") {
                try await FaultLoad.send(number, to: session, on: api)
            }
            #expect(reply.status == .ok, "request \(number) to \(session): \(reply.status) \(reply.body)")
            #expect(journal?.requests == from + offset + 1 && journal?.lastRequest == number, "request \(number): \(reply.body)")
        }
    }

    /// Server A owns a session and dies (SIGKILL). Server B answers 503 `session_owned_elsewhere`
    /// while A's lease lasts, then takes the session over and answers with the recovered state.
    @Test(arguments: Backend.allCases)
    func theOtherServerTakesOverAfterTheLeaseExpires(backend: Backend) async throws {
        let session = Self.freshSession("takeover")
        try await withServerProcesses { processes in
            let a = try await processes.start(try Self.arguments(node: "a", backend: backend))
            let b = try await processes.start(try Self.arguments(node: "b", backend: backend))
            try await FaultLoad.open([session], on: a.api)
            try await Self.sendAnswered(1...5, to: session, on: a.api, counting: 0)
            let health = try await bounded("GET /health on A") { try await a.api.send(.GET, "/health") }
            #expect(health.status == .ok && health.body == "ok", "the journal answers: \(health.status) \(health.body)")

            let refused = try await bounded("GET on B while A holds the lease") { try await b.api.get(session) }
            #expect(refused.status == .serviceUnavailable && refused.errorCode == "session_owned_elsewhere", "\(refused.status) \(refused.body)")

            try await a.kill9()
            let start = ContinuousClock.now
            let recovered = try await poll("B to take over \(session) after A's lease expired", { try await b.api.get(session) }) {
                $0.status != .serviceUnavailable || $0.errorCode != "session_owned_elsewhere"
            }
            print("takeover (\(backend)): B answered \(ContinuousClock.now - start) after A's SIGKILL (lease \(Self.leaseSeconds) s)")
            #expect(recovered.status == .ok, "\(recovered.status) \(recovered.body)")
            let journal = try recovered.decoded().journal
            #expect(journal?.requests == 5 && journal?.lastRequest == 5, "B recovered \(recovered.body)")
            try await Self.sendAnswered(6...7, to: session, on: b.api, counting: 5)
        }
    }

    /// Server A owns a session and is paused (SIGSTOP) past its lease; B takes the session over
    /// (recovering it appends nothing, so the journal's head is still where A left it: only the
    /// epoch can tell A's next append from a legitimate one). A, resumed (SIGCONT), still holds
    /// the session in memory: its request must be refused (503 `session_owned_elsewhere`: the
    /// append was fenced, or the lost lease stopped the loop first), and nothing of it may reach
    /// the journal — B's next append continues the journal, and A, once B has shut down and given
    /// the lease back, recovers the journal without A's request.
    @Test(arguments: Backend.allCases)
    func aPausedOwnerCannotAppendAfterItsLeaseExpired(backend: Backend) async throws {
        let session = Self.freshSession("fencing")
        try await withServerProcesses { processes in
            let a = try await processes.start(try Self.arguments(node: "a", backend: backend))
            let b = try await processes.start(try Self.arguments(node: "b", backend: backend))
            try await FaultLoad.open([session], on: a.api)
            try await Self.sendAnswered(1...3, to: session, on: a.api, counting: 0)

            a.signal(SIGSTOP)
            let recovered = try await poll("B to take over \(session) from the paused A", { try await b.api.get(session) }) {
                $0.status != .serviceUnavailable || $0.errorCode != "session_owned_elsewhere"
            }
            #expect(recovered.status == .ok, "\(recovered.status) \(recovered.body)")
            #expect(try recovered.decoded().journal?.requests == 3, "B recovered \(recovered.body)")

            a.signal(SIGCONT)
            let (zombie, _) = try await bounded("A's answer after SIGCONT") { try await FaultLoad.send(4, to: session, on: a.api) }
            #expect(
                zombie.status == .serviceUnavailable && zombie.errorCode == "session_owned_elsewhere",
                "the deposed owner answered \(zombie.status) \(zombie.body)")

            // Had A's request been journaled, B's append would not continue the journal.
            try await Self.sendAnswered(5...5, to: session, on: b.api, counting: 3)

            // B shuts down and gives the lease back; A recovers from the journal alone.
            b.signal(SIGTERM)
            try await bounded("B to exit after SIGTERM") { try await b.exited.wait() }
            let fromJournal = try await poll("A to recover \(session) once B released it", { try await a.api.get(session) }) {
                $0.status != .serviceUnavailable || $0.errorCode != "session_owned_elsewhere"
            }
            #expect(fromJournal.status == .ok, "\(fromJournal.status) \(fromJournal.body)")
            let journal = try fromJournal.decoded().journal
            #expect(journal?.requests == 4 && journal?.lastRequest == 5, "A recovered \(fromJournal.body): request 4 must not be in the journal")
        }
    }
}
