import FeedbackLoop
import FeedbackLoopServices
import Instrumentation
import SharedTestSupport
import Testing

/// Rules: `LoopRegistry` and `LoopService` keep their caller's `ServiceContext` across their own
/// hops. The effect an event causes runs in the context of the request that sent it, whether the
/// registry created the loop for that use, found it live, or made the use wait while another use
/// created it; and through a `LoopService`'s `send` and `sendAndWait` alike. On every backend.
@Suite(.timeLimit(.minutes(5)))
struct ServiceContextTests {
    /// Each recorded value starts a `.run` effect, which notes the request it runs for.
    enum Tally {
        struct State: Equatable, Sendable {
            var values: Set<Int> = []
        }

        enum Event: Equatable, Sendable {
            case record(Int)
        }

        static func reduce(_ state: inout State, _ event: Event) {
            switch event {
            case .record(let value): state.values.insert(value)
            }
        }
    }

    /// What the effects saw: the request each value's effect ran for.
    final class Seen: Sendable {
        private let state = Lock<(requests: [Int: String], waiters: [(Int, CheckedContinuation<Void, Never>)])>(([:], []))

        func note(_ value: Int) {
            let request = ServiceContext.currentRequest
            let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.requests[value] = request
                let count = state.requests.count
                defer { state.waiters.removeAll { $0.0 <= count } }
                return state.waiters.filter { $0.0 <= count }.map(\.1)
            }
            for waiter in ready { waiter.resume() }
        }

        var requests: [Int: String] { state.withLock { $0.requests } }

        /// Returns once `count` effects have noted their request.
        func wait(for count: Int) async {
            await withCheckedContinuation { waiter in
                let reached = state.withLock { state -> Bool in
                    if state.requests.count >= count { return true }
                    state.waiters.append((count, waiter))
                    return false
                }
                if reached { waiter.resume() }
            }
        }

        func loop(_ backend: Backend) -> Loop<Tally.State, Tally.Event> {
            Loop(
                initial: Tally.State(),
                reduce: Tally.reduce,
                feedbacks: [.requests({ $0.values }) { value in .run { [self] _ in note(value) } }],
                backend: backend,
                configuration: LoopConfiguration(label: "tally", logger: .quiet, serviceContext: .enabled))
        }
    }

    /// Many requests use three ids at once, all through first uses racing to create their loops:
    /// whichever use created a loop and whichever waited for it, each effect runs for its own
    /// request.
    @Test(arguments: Backend.allCases)
    func aRegistryKeepsEachCallersContextThroughGetOrCreate(backend: Backend) async throws {
        let seen = Seen()
        let registry = LoopRegistry<String, Tally.State, Tally.Event>(
            configuration: .init(logger: .quiet), clock: ManualClock(), makeLoop: { _ in seen.loop(backend) })
        let uses = 30
        try await withThrowingTaskGroup(of: Void.self) { group in
            for value in 0..<uses {
                group.addTask {
                    try await ServiceContext.$current.withValue(.request("r\(value)")) {
                        let id = "loop\(value % 3)"
                        switch value % 3 {
                        case 0: _ = try await registry.sendAndWait(.record(value), to: id)
                        case 1: _ = try await registry.send(.record(value), to: id)
                        default: _ = try await registry.withLoop(for: id) { $0.service.send(.record(value)) }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        await seen.wait(for: uses)
        #expect(seen.requests == Dictionary(uniqueKeysWithValues: (0..<uses).map { ($0, "r\($0)") }))
        #expect(registry.statistics.created == 3)
        for id in ["loop0", "loop1", "loop2"] { _ = await registry.remove(id) }
    }

    @Test(arguments: Backend.allCases)
    func aLoopServiceKeepsTheCallersContext(backend: Backend) async throws {
        let seen = Seen()
        let service = LoopService(loop: seen.loop(backend), clock: ManualClock(), logger: .quiet)
        try await ServiceContext.$current.withValue(.request("a")) { _ = try await service.sendAndWait(.record(1)) }
        ServiceContext.$current.withValue(.request("b")) { _ = service.send(.record(2)) }
        await seen.wait(for: 2)
        #expect(seen.requests == [1: "a", 2: "b"])
        await service.loop.stop()
    }
}
