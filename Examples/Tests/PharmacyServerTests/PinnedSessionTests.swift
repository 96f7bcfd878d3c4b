import FeedbackExamples
import FeedbackLoop
import NIOCore
import NIOPosix
import PharmacyServer
import Testing

/// `PharmacySessions.Configuration.eventLoops`: on the actor backend, each session's loop runs on
/// one of the server's event loops, the same one for the session's whole life, chosen by its id.
@Suite("Sessions pinned to the server's event loops")
struct PinnedSessionTests {
    @Test("every state of a pinned session is produced on one event loop of the group")
    func pinnedSessionsRunOnTheirEventLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 3)
        let loops = Array(group.makeIterator())
        try await RunningServer.with(
            sessions: .init(
                backend: .actor, eventLoops: group,
                makeService: { _ in FakePharmaciesService(saved: PharmacyServerTests.saved) },
                logger: RunningServer.quiet)
        ) { running in
            let api = running.api
            for session in ["alice", "bob", "carol", "dave"] {
                #expect(try await api.open(session).status == .created)
                // Which event loops ran this session's observer: exactly one, every time.
                let seen = Locked<Set<Int>>([])
                let lease = try #require(running.server.sessions.registry.existing(session))
                let observation = lease.loop.observe { _ in
                    let index = loops.firstIndex { $0.inEventLoop } ?? -1
                    seen.withLock { _ = $0.insert(index) }
                }
                for _ in 0..<5 {
                    #expect(try await api.post(session, .addPharmacy).status == .ok)
                    #expect(try await api.post(session, .closeMap).status == .ok)
                }
                observation.cancel()
                let indices = seen.withLock { $0 }
                #expect(indices.count == 1 && !indices.contains(-1), "\(session) ran on \(indices) (-1: off the group)")
            }
        }
        try await group.shutdownGracefully()
    }
}

