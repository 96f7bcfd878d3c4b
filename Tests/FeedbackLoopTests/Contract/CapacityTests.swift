import FeedbackLoop
import Instrumentation
import Testing

/// Event intake: unbounded by default; bounded drops (and counts) with `send` and waits with
/// `sendAndWait`.
@Suite("Capacity: bounded queues shed load visibly")
struct CapacityTests {
    /// A loop of `capacity` whose drain is held (see ``withDrainHeld(_:by:at:_:)``) while `body`
    /// runs; stopped afterwards.
    private func withHeldLoop(
        _ backend: Backend,
        capacity: EventCapacity,
        _ body: (_ loop: Loop<Counter.State, Counter.Event>, _ release: DispatchGate) async throws -> Void
    ) async throws {
        let loop = Loop(
            initial: Counter.State(),
            reduce: Counter.reduce,
            backend: backend,
            configuration: LoopConfiguration(capacity: capacity))
        try await withDrainHeld(loop, by: .increment, at: { $0.count == 1 }) { release in
            try await body(loop, release)
        }
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func aFullBoundedQueueDropsSendsAndCountsThem(backend: Backend) async throws {
        try await withHeldLoop(backend, capacity: .bounded(3)) { loop, release in
        for _ in 0..<5 { loop.send(.increment) }
        #expect(loop.statistics.eventsDroppedOverCapacity == 2)
        release.open()
        try await withDeadline("the queue to drain") { await loop.waitUntilIdle() }
        #expect(loop.state.count == 4)
        for _ in 0..<2 {
            for _ in 0..<3 { loop.send(.increment) }
            await loop.waitUntilIdle()
        }
        #expect(loop.state.count == 10, "room comes back as the queue drains")
        #expect(loop.statistics.eventsDroppedOverCapacity == 2)
        }
    }

    @Test(arguments: Backend.allCases)
    func sendAndWaitWaitsForRoomInsteadOfDropping(backend: Backend) async throws {
        try await withHeldLoop(backend, capacity: .bounded(2)) { loop, release in
        loop.send(.increment)
        loop.send(.increment)
        let waiting = Task { try await loop.sendAndWait(.add(100)) }
        release.open()
        let state = try await withDeadline("the waiting send") { try await waiting.value }
        #expect(state.count == 103)
        #expect(loop.statistics.eventsDroppedOverCapacity == 0)
        }
    }

    @Test(arguments: Backend.allCases)
    func aCancelledWaitForRoomThrowsAndQueuesNothing(backend: Backend) async throws {
        try await withHeldLoop(backend, capacity: .bounded(1)) { loop, release in
        loop.send(.increment)
        let waiting = Task { try await loop.sendAndWait(.add(100)) }
        waiting.cancel()
        await #expect(throws: LoopError.cancelled) { try await waiting.value }
        release.open()
        await loop.waitUntilIdle()
        #expect(loop.state.count == 2)
        }
    }

    /// A `sendAndWait` whose task is cancelled while it waits for room is a drop like every other:
    /// counted in ``LoopStatistics/eventsCancelledWhileWaiting`` and reported to `onDrop` with its
    /// event and ``DropReason/cancelledWhileWaiting``, in the caller's own context (whether or
    /// not the loop propagates contexts), before the call throws.
    @Test(arguments: Backend.allCases, [ServiceContextPropagation.enabled, .disabled])
    func aCancelledWaitForRoomIsReportedAsADrop(backend: Backend, propagation: ServiceContextPropagation) async throws {
        let drops = Locked<[String]>([])
        let loop = Loop(
            initial: Counter.State(),
            reduce: Counter.reduce,
            backend: backend,
            configuration: LoopConfiguration(capacity: .bounded(1), serviceContext: propagation),
            instrumentation: LoopInstrumentation(onDrop: { event, reason in
                drops.append("\(event) \(reason) in \(ServiceContext.currentRequest)")
            }))
        try await withDrainHeld(loop, by: .increment, at: { $0.count == 1 }) { release in
            loop.send(.increment)  // takes the one place
            let waiting = Task {
                try await ServiceContext.$current.withValue(.request("waiter")) { try await loop.sendAndWait(.add(100)) }
            }
            try await waitUntil("the sendAndWait to wait for room") { loop.parkedSubmits == 1 }
            waiting.cancel()
            await #expect(throws: LoopError.cancelled) { try await waiting.value }
            #expect(drops.current == ["add(100) cancelledWhileWaiting in waiter"])
            #expect(loop.statistics.eventsCancelledWhileWaiting == 1)
            release.open()
        }
        try await withDeadline("the queue to drain") { await loop.waitUntilIdle() }
        #expect(loop.state.count == 2, "the cancelled call's event was never queued")
        let statistics = loop.statistics
        #expect(statistics.eventsReduced == 2)
        #expect(statistics.eventsCancelledWhileWaiting == 1)
        #expect(statistics.eventsDroppedOverCapacity + statistics.eventsDroppedAfterStop + statistics.eventsDiscardedAtStop == 0)
        await loop.stop()
    }

    /// The same drop when the caller's task was cancelled before it called: it parks, finds its
    /// task cancelled, and leaves the line at once (no cancellation handler will come).
    @Test(arguments: Backend.allCases)
    func aSendAndWaitFromACancelledTaskIntoAFullQueueIsReportedAsADrop(backend: Backend) async throws {
        let drops = Locked<[String]>([])
        let loop = Loop(
            initial: Counter.State(),
            reduce: Counter.reduce,
            backend: backend,
            configuration: LoopConfiguration(capacity: .bounded(1)),
            instrumentation: LoopInstrumentation(onDrop: { event, reason in drops.append("\(event) \(reason)") }))
        try await withDrainHeld(loop, by: .increment, at: { $0.count == 1 }) { release in
            loop.send(.increment)  // takes the one place
            let waiting = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await loop.sendAndWait(.add(100))
            }
            await #expect(throws: LoopError.cancelled) { try await waiting.value }
            #expect(drops.current == ["add(100) cancelledWhileWaiting"])
            #expect(loop.statistics.eventsCancelledWhileWaiting == 1)
            #expect(loop.parkedSubmits == 0)
            release.open()
        }
        try await withDeadline("the queue to drain") { await loop.waitUntilIdle() }
        #expect(loop.state.count == 2)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func stopFailsSendsWaitingForRoom(backend: Backend) async throws {
        try await withHeldLoop(backend, capacity: .bounded(1)) { loop, release in
        loop.send(.increment)
        let waiting = Task { try await loop.sendAndWait(.add(100)) }
        let stopping = Task { await loop.stop() }
        try await waitUntil("stop to begin") { loop.statistics.eventsDiscardedAtStop > 0 }
        release.open()
        await stopping.value
        await #expect(throws: LoopError.stopped) { try await waiting.value }
        #expect(loop.statistics.eventsReduced == 1)
        }
    }

    @Test(arguments: Backend.allCases)
    func unboundedIsTheDefaultAndNeverDrops(backend: Backend) async throws {
        try await withHeldLoop(backend, capacity: LoopConfiguration().capacity) { loop, release in
        for _ in 0..<10_000 { loop.send(.increment) }
        release.open()
        await loop.waitUntilIdle()
        #expect(loop.state.count == 10_001)
        #expect(loop.statistics.eventsDroppedOverCapacity == 0)
        }
    }
}
