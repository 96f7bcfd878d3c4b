import Dispatch
import FeedbackLoop
import Instrumentation
import Testing

/// `send(contentsOf:)`: a batch enters in order and contiguously, and is dropped and counted as
/// `send` drops and counts, event by event.
@Suite("Batch send: one intake for several events")
struct BatchSendTests {
    private func makeLoop(
        _ backend: Backend,
        capacity: EventCapacity = .unbounded,
        propagation: ServiceContextPropagation = .disabled,
        drops: Locked<[String]>? = nil
    ) -> Loop<Counter.State, Counter.Event> {
        Loop(
            initial: Counter.State(),
            reduce: Counter.reduce,
            backend: backend,
            configuration: LoopConfiguration(capacity: capacity, serviceContext: propagation),
            instrumentation: drops.map { drops in
                LoopInstrumentation(onDrop: { event, reason in drops.append("\(event) \(reason)") })
            })
    }

    /// Another thread's event, sent while the caller is still producing the batch, lands before
    /// the batch, never inside it: the sequence is taken whole, then enqueued in one go.
    @Test(arguments: Backend.allCases, [ServiceContextPropagation.enabled, .disabled])
    func aBatchIsReducedInOrderWithNothingBetweenItsEvents(backend: Backend, propagation: ServiceContextPropagation) async throws {
        let loop = makeLoop(backend, propagation: propagation)
        let other = DispatchQueue(label: "other sender")
        let batch = (0..<4).lazy.map { value -> Counter.Event in
            if value == 2 { other.sync { loop.send(.record(-1)) } }
            return .record(value)
        }
        loop.send(contentsOf: batch)
        try await withDeadline("the batch to be reduced") { await loop.waitUntilIdle() }
        #expect(loop.state.history == [-1, 0, 1, 2, 3])
        await loop.stop()
    }

    @Test(arguments: Backend.allCases, [ServiceContextPropagation.enabled, .disabled])
    func afterStopEveryEventOfABatchIsDroppedAndCounted(backend: Backend, propagation: ServiceContextPropagation) async throws {
        let drops = Locked<[String]>([])
        let loop = makeLoop(backend, propagation: propagation, drops: drops)
        loop.send(.increment)
        try await withDeadline("the first event") { await loop.waitUntilIdle() }
        await loop.stop()
        loop.send(contentsOf: [Counter.Event.add(10), .add(20), .add(30)])
        #expect(loop.statistics.eventsDroppedAfterStop == 3)
        #expect(drops.current == ["add(10) afterStop", "add(20) afterStop", "add(30) afterStop"])
        #expect(loop.state.count == 1)
    }

    /// With the drain held, the batch meets a queue with room for three: the first three go in,
    /// in order, and the rest are dropped and counted, as many `send`s would be. A loop that
    /// propagates `ServiceContext` takes the same path with each event's context.
    @Test(arguments: Backend.allCases, [ServiceContextPropagation.enabled, .disabled])
    func aBoundedQueueTakesWhatFitsAndDropsTheRest(backend: Backend, propagation: ServiceContextPropagation) async throws {
        let drops = Locked<[String]>([])
        let loop = makeLoop(backend, capacity: .bounded(3), propagation: propagation, drops: drops)
        try await withDrainHeld(loop, by: .increment, at: { $0.count == 1 }) { release in
            loop.send(contentsOf: [Counter.Event.record(1), .record(2), .record(3), .record(4), .record(5)])
            #expect(loop.statistics.eventsDroppedOverCapacity == 2)
            #expect(drops.current == ["record(4) overCapacity", "record(5) overCapacity"])
            release.open()
        }
        try await withDeadline("the queue to drain") { await loop.waitUntilIdle() }
        #expect(loop.state.history == [1, 2, 3])
        loop.send(contentsOf: [Counter.Event.record(6), .record(7)])
        try await withDeadline("the next batch") { await loop.waitUntilIdle() }
        #expect(loop.state.history == [1, 2, 3, 6, 7], "room comes back as the queue drains")
        #expect(loop.statistics.eventsDroppedOverCapacity == 2)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func anEmptyBatchDoesNothing(backend: Backend) async throws {
        let drops = Locked<[String]>([])
        let loop = makeLoop(backend, drops: drops)
        try await withDeadline("the loop to start") { await loop.waitUntilIdle() }
        let before = loop.statistics
        loop.send(contentsOf: [Counter.Event]())
        #expect(loop.statistics == before)
        loop.send(.increment)
        try await withDeadline("a send after the empty batch") { await loop.waitUntilIdle() }
        #expect(loop.state.count == 1)
        await loop.stop()
        let stopped = loop.statistics
        loop.send(contentsOf: EmptyCollection<Counter.Event>())
        #expect(loop.statistics == stopped)
        #expect(drops.current.isEmpty)
    }
}
