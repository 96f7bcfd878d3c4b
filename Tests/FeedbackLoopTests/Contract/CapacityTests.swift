import FeedbackLoop
import Testing

/// Event intake: unbounded by default; bounded drops (and counts) with `send` and waits with
/// `sendAndWait`.
@Suite("Capacity: bounded queues shed load visibly")
struct CapacityTests {
    /// A loop whose drain is held inside an observer until `release` opens, so that later sends
    /// pile up in the queue.
    struct Held {
        let loop: Loop<Counter.State, Counter.Event>
        let release = DispatchGate()
        let token: Observation

        init(backend: Backend, capacity: EventCapacity) async throws {
            await BlockingTurn.shared.acquire()
            let loop = Loop(
                initial: Counter.State(),
                reduce: Counter.reduce,
                backend: backend,
                configuration: LoopConfiguration(capacity: capacity))
            let holding = Gate()
            let release = self.release
            token = loop.observe { state in
                if state.count == 1 {
                    holding.open()
                    release.wait()
                }
            }
            self.loop = loop
            Task { await onThreads(1) { _ in loop.send(.increment) } }
            try await withDeadline("the drain to be held") { await holding.wait() }
        }

        /// Stops the loop and lets the next blocking test go.
        func finish() async {
            release.open()
            await loop.stop()
            await BlockingTurn.shared.release()
        }
    }

    @Test(arguments: Backend.allCases)
    func aFullBoundedQueueDropsSendsAndCountsThem(backend: Backend) async throws {
        let held = try await Held(backend: backend, capacity: .bounded(3))
        for _ in 0..<5 { held.loop.send(.increment) }
        #expect(held.loop.statistics.eventsDroppedOverCapacity == 2)
        held.release.open()
        try await withDeadline("the queue to drain") { await held.loop.waitUntilIdle() }
        #expect(held.loop.state.count == 4)
        for _ in 0..<2 {
            for _ in 0..<3 { held.loop.send(.increment) }
            await held.loop.waitUntilIdle()
        }
        #expect(held.loop.state.count == 10, "room comes back as the queue drains")
        #expect(held.loop.statistics.eventsDroppedOverCapacity == 2)
        await held.finish()
    }

    @Test(arguments: Backend.allCases)
    func sendAndWaitWaitsForRoomInsteadOfDropping(backend: Backend) async throws {
        let held = try await Held(backend: backend, capacity: .bounded(2))
        held.loop.send(.increment)
        held.loop.send(.increment)
        let loop = held.loop
        let waiting = Task { try await loop.sendAndWait(.add(100)) }
        held.release.open()
        let state = try await withDeadline("the waiting send") { try await waiting.value }
        #expect(state.count == 103)
        #expect(loop.statistics.eventsDroppedOverCapacity == 0)
        await held.finish()
    }

    @Test(arguments: Backend.allCases)
    func aCancelledWaitForRoomThrowsAndQueuesNothing(backend: Backend) async throws {
        let held = try await Held(backend: backend, capacity: .bounded(1))
        held.loop.send(.increment)
        let loop = held.loop
        let waiting = Task { try await loop.sendAndWait(.add(100)) }
        waiting.cancel()
        await #expect(throws: LoopError.cancelled) { try await waiting.value }
        held.release.open()
        await loop.waitUntilIdle()
        #expect(loop.state.count == 2)
        await held.finish()
    }

    @Test(arguments: Backend.allCases)
    func stopFailsSendsWaitingForRoom(backend: Backend) async throws {
        let held = try await Held(backend: backend, capacity: .bounded(1))
        held.loop.send(.increment)
        let loop = held.loop
        let waiting = Task { try await loop.sendAndWait(.add(100)) }
        let stopping = Task { await loop.stop() }
        try await waitUntil("stop to begin") { loop.statistics.eventsDiscardedAtStop > 0 }
        held.release.open()
        await stopping.value
        await #expect(throws: LoopError.stopped) { try await waiting.value }
        #expect(loop.statistics.eventsReduced == 1)
        await held.finish()
    }

    @Test(arguments: Backend.allCases)
    func unboundedIsTheDefaultAndNeverDrops(backend: Backend) async throws {
        let held = try await Held(backend: backend, capacity: LoopConfiguration().capacity)
        for _ in 0..<10_000 { held.loop.send(.increment) }
        held.release.open()
        await held.loop.waitUntilIdle()
        #expect(held.loop.state.count == 10_001)
        #expect(held.loop.statistics.eventsDroppedOverCapacity == 0)
        await held.finish()
    }
}
