import FeedbackExamples
import FeedbackLoop
import FeedbackLoopDurable
import Foundation
import NIOHTTP1
import PharmacyServer
import Testing

/// Version 1 of the durable session's schema, as it shipped: the code that wrote
/// `Fixtures/pharmacy-sessions-v1.sqlite`, the journal the current server must recover. Version 2
/// is `SessionState` and `SessionEvent` with `DurableSession.schemaVersion`. The fixture, not this
/// code, is the record of what version 1 wrote; this is how it was made.
enum SessionV1 {
    struct State: Codable, Sendable, Equatable {
        var pharmacies: Pharmacies.State?
        var requests = 0
        var lastRequest: Int?
        var finalScreen: Pharmacies.State?
    }

    enum Event: Codable, Sendable, Equatable {
        case opened
        case request(Pharmacies.Event, number: Int?)
        case pharmacies(Pharmacies.Event)
        case closed
    }

    @Sendable
    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .opened:
            if state.pharmacies == nil { state = State(pharmacies: Pharmacies.initialState) }
        case .request(let event, let number):
            guard var screen = state.pharmacies else { return }
            Pharmacies.reduce(&screen, event)
            state.pharmacies = screen
            state.requests += 1
            if let number { state.lastRequest = number }
        case .pharmacies(let event):
            guard var screen = state.pharmacies else { return }
            Pharmacies.reduce(&screen, event)
            state.pharmacies = screen
        case .closed:
            state = State(requests: state.requests, lastRequest: state.lastRequest, finalScreen: state.pharmacies)
        }
    }

    static let saved = FakePharmaciesService.sampleSaved
    static let superdrug = FakePharmaciesService.sampleMapPlaces[1]

    /// What version 1 journaled for two sessions, as its server would have with the fake back
    /// end: `alice` added Superdrug and is open on the map's list; `bob` was closed. Written with
    /// a snapshot every 3 events, so that recovery reads a version 1 snapshot (alice's at 6) and a
    /// version 1 event after it (7).
    static let history: [(session: String, events: [Event])] = [
        (
            "alice",
            [
                .opened, .pharmacies(.didLoad(saved)), .request(.ui(.addPharmacy), number: 1),
                .request(.didSelectPlace(.selected(superdrug)), number: 2), .pharmacies(.didAdd(Pharmacy(superdrug))),
                .request(.ui(.addPharmacy), number: nil), .request(.didSelectPlace(.cancelled), number: 4),
            ]
        ),
        ("bob", [.opened, .pharmacies(.didLoad(saved)), .request(.ui(.addPharmacy), number: 1), .closed]),
    ]

    /// Writes ``history`` into a new SQLite journal at `path`, as version 1 did, and leaves the
    /// file holding all of it, with no write-ahead log beside it.
    static func writeJournal(at path: String) async throws {
        for file in [path, path + "-wal", path + "-shm"] { try? FileManager.default.removeItem(atPath: file) }
        do {
            let journal = try SQLiteJournal(path: path)
            for (session, events) in history {
                let loop = try await DurableLoop(
                    id: session, journal: journal, initial: State(), reduce: reduce,
                    configuration: DurableConfiguration(feature: DurableSession.feature, snapshotEvery: 3, schemaVersion: 1))
                for event in events { try await loop.sendAndWait(event) }
                await loop.stop()
            }
            try await journal.checkpoint()
        }
        // The journal is closed: SQLite removes an empty log and its index when the last
        // connection goes, and a file of the fixture must not depend on them.
        for file in [path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            throw FixtureError("\(file) is still there after the journal was closed: the fixture would be incomplete")
        }
    }

    /// The file ``writeJournal(at:)`` wrote once, checked into the repository: what the server
    /// must keep recovering, whatever becomes of this enum or of the library's writing.
    static let fixture = "pharmacy-sessions-v1.sqlite"
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "Fixtures")

    /// Copies the checked-in fixture to `path`: recovering takes ownership of a session, which
    /// writes, and the fixture must stay as version 1 left it.
    static func copyFixture(to path: String) throws {
        guard let url = Bundle.module.url(forResource: "Fixtures/\(fixture)", withExtension: nil) else {
            throw FixtureError("the fixture \(fixture) is missing from the test bundle")
        }
        try FileManager.default.copyItem(at: url, to: URL(fileURLWithPath: path))
    }

    struct FixtureError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

/// The server recovers, over HTTP, the sessions the previous version of its session schema
/// journaled, from a journal that version wrote and that is checked in
/// (`Fixtures/pharmacy-sessions-v1.sqlite`): the upcasting path of the article "Evolving a
/// durable feature", on the example server, and the pattern to copy for a feature of one's own.
/// (`test.sh` runs it with the journal's other tests: its name ends in `DurableSessionTests`.)
@Suite(.timeLimit(.minutes(2)))
struct EvolvedDurableSessionTests {
    static let saved = FakePharmaciesService.sampleSaved
    static let withSuperdrug = saved + [Pharmacy(SessionV1.superdrug)]

    /// Regenerates `Fixtures/pharmacy-sessions-v1.sqlite` with version 1 of the session's schema
    /// (``SessionV1``). Disabled unless asked for: the fixture is the record of what version 1
    /// wrote, made once and kept. To remake it (the tests below must then pass on the new file
    /// unchanged), from the repository's root:
    ///
    ///     (cd Examples && swift build --build-tests)
    ///     FEEDBACKLOOP_WRITE_FIXTURES=1 Examples/test.sh --filter EvolvedDurableSessionTests/writeVersion1Fixture
    @Test(.enabled(if: ProcessInfo.processInfo.environment["FEEDBACKLOOP_WRITE_FIXTURES"] != nil))
    func writeVersion1Fixture() async throws {
        try await SessionV1.writeJournal(at: SessionV1.fixtures.appending(path: SessionV1.fixture).path)
    }

    @Test(
        "the checked-in journal of schema version 1 recovers into version 2; both versions' records recover together",
        arguments: Backend.allCases)
    func recoversTheSessionsVersion1Journaled(backend: Backend) async throws {
        try await DurableSessionTests.withJournalPath("evolved-\(backend)") { path in
            try SessionV1.copyFixture(to: path)
            try await Self.expectVersion1Records(at: path)

            try await RunningServer.with(sessions: try DurableSessionTests.sessions(backend: backend, journal: path)) { running in
                let api = running.api
                // From version 1's snapshot at 6 (the state's renamed counters) and its event 7
                // (the renamed case).
                let recovered = try await api.get("alice")
                try #require(recovered.status == .ok, "\(recovered.status) \(recovered.body)")
                let alice = try recovered.decoded()
                #expect(alice.state == .loaded(Self.withSuperdrug, nil))
                #expect(Self.figures(alice) == "sequence 7, requests 4, last 4")
                // Closed by version 1: gone, as any closed session.
                let bob = try await api.get("bob")
                #expect(bob.status == .notFound && bob.errorCode == "session_not_found", "\(bob.status) \(bob.body)")

                let added = try await api.send(.POST, "/sessions/alice/events", json: #"{"type": "addPharmacy", "request": 5}"#)
                #expect(added.status == .ok, "\(added.status) \(added.body)")
                #expect(try added.decoded().state == .searching(Self.withSuperdrug))
                #expect(Self.figures(try added.decoded()) == "sequence 8, requests 5, last 5")
            }

            // The next server replays version 1's snapshot and event, then version 2's event.
            try await RunningServer.with(sessions: try DurableSessionTests.sessions(backend: backend, journal: path)) { running in
                let api = running.api
                let recovered = try await api.get("alice")
                try #require(recovered.status == .ok, "\(recovered.status) \(recovered.body)")
                #expect(try recovered.decoded().state == .searching(Self.withSuperdrug))
                #expect(Self.figures(try recovered.decoded()) == "sequence 8, requests 5, last 5")
                let reopened = try await api.open("bob")
                #expect(reopened.status == .created, "\(reopened.status) \(reopened.body)")
                #expect(try reopened.decoded().journal?.requests == 0)
            }
            // What the current server journaled carries version 2, so that it is never read as version 1's shape.
            let written = try await SQLiteJournal(path: path).events(loop: "alice", after: 7, limit: 10)
            #expect(written.map(\.schemaVersion) == [DurableSession.schemaVersion], "\(written)")
        }
    }

    /// An answer's journal figures, in one comparable line.
    static func figures(_ response: SessionResponse) -> String {
        guard let journal = response.journal else { return "no journal figures" }
        return "sequence \(journal.sequence), requests \(journal.requests), last \(journal.lastRequest.map(String.init) ?? "none")"
    }

    /// The journal holds what version 1 wrote: its version number and its shapes, so that this
    /// test keeps guarding version 1's records even if the fixture were remade from a `SessionV1`
    /// edited by mistake.
    static func expectVersion1Records(at path: String) async throws {
        let journal = try SQLiteJournal(path: path)
        let events = try await journal.events(loop: "alice", after: 0, limit: 100)
        #expect(events.map(\.sequence) == Array(1...7))
        #expect(events.allSatisfy { $0.schemaVersion == 1 })
        let last = try #require(events.last)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(last.payload)) as? [String: Any])
        #expect(Array(object.keys) == ["request"], "\(String(decoding: last.payload, as: UTF8.self))")
        #expect((object["request"] as? [String: Any])?["number"] as? Int == 4, "\(String(decoding: last.payload, as: UTF8.self))")

        let snapshot = try #require(try await journal.latestSnapshot(loop: "alice"))
        #expect(snapshot.sequence == 6 && snapshot.schemaVersion == 1)
        let state = try #require(try JSONSerialization.jsonObject(with: Data(snapshot.payload)) as? [String: Any])
        #expect(state["requests"] as? Int == 3 && state["lastRequest"] as? Int == 2, "\(state)")
    }
}
