import Dispatch
@testable import FeedbackLoop
import Instrumentation
import Testing

/// Rules: a loop that propagates `ServiceContext` (``ServiceContextPropagation``) runs each effect
/// in the context of the event that caused it, on every backend.
///
/// - The cause of an effect is the event whose step started it: for a state a batch of events
///   produced, the event that produced it, whichever events came before or after in the batch.
/// - A `.run` effect's body and a `.callback` effect's start run in that context; the events the
///   effect sends carry it on (a `.callback` effect's sink from any thread), and so do the events
///   of a `.send` effect. A child feature's effects behave the same.
/// - A loop that does not propagate keeps today's rules (see ``TaskTreeTests``): an effect sees
///   the task-locals of the task that starts it, which no backend promises.
@Suite("ServiceContext travels with events into the effects they cause")
struct ServiceContextTests {
    /// A `.run` and a `.callback` effect per recorded value, each noting the request it runs for;
    /// recording 2 also sends `.record(20)` through a `.send` effect.
    static func recordingLoop(
        _ backend: Backend, propagation: ServiceContextPropagation, ran: Locked<[Int: String]>,
        started: Locked<[Int: String]>, ended: CountdownLatch
    ) -> Loop<Counter.State, Counter.Event> {
        Loop(
            initial: Counter.State(),
            reduce: Counter.reduce,
            feedbacks: [
                .requests({ Set($0.history) }) { value in
                    .run { _ in
                        ran.withLock { $0[value] = ServiceContext.currentRequest }
                        ended.increment()
                    }
                },
                .requests({ Set($0.history) }) { value in
                    .callback { _ in
                        started.withLock { $0[value] = ServiceContext.currentRequest }
                        return Cancellation {}
                    }
                },
                .requests({ Set($0.history) }) { value in
                    value == 2 ? .send(.record(20)) : .none
                },
            ],
            backend: backend,
            configuration: LoopConfiguration(serviceContext: propagation))
    }

    /// Three requests interleave their events in one batch, drained by a thread that runs for no
    /// request: without propagation their effects would all see the drainer's (empty) context.
    static func interleave(_ backend: Backend, propagation: ServiceContextPropagation) async throws
        -> (ran: [Int: String], started: [Int: String])
    {
        let ran = Locked<[Int: String]>([:])
        let started = Locked<[Int: String]>([:])
        let ended = CountdownLatch()
        let loop = recordingLoop(backend, propagation: propagation, ran: ran, started: started, ended: ended)
        await loop.waitUntilIdle()
        try await withDrainHeld(loop, by: .setFlag(true), at: \.flag) { release in
            ServiceContext.$current.withValue(.request("a")) { loop.send(.record(1)) }
            ServiceContext.$current.withValue(.request("b")) { loop.send(.record(2)) }
            ServiceContext.$current.withValue(.request("a")) { loop.send(.record(3)) }
            // Changes no request: its context reaches no effect.
            ServiceContext.$current.withValue(.request("c")) { loop.send(.increment) }
            let waiter = Task {
                try await ServiceContext.$current.withValue(.request("w")) { try await loop.sendAndWait(.record(4)) }
            }
            try await waitUntil("the sendAndWait to queue") { loop.engine.lock.withLock { $0.items.count } == 5 }
            release.open()
            _ = try await waiter.value
        }
        try await withDeadline("five effects") { await ended.wait(for: 5) }
        await loop.stop()
        return (ran.current, started.current)
    }

    @Test(arguments: Backend.allCases)
    func eachEffectRunsInTheContextOfTheEventThatCausedIt(backend: Backend) async throws {
        let (ran, started) = try await Self.interleave(backend, propagation: .enabled)
        // 20 comes from the `.send` effect of 2's step: b's.
        let expected = [1: "a", 2: "b", 3: "a", 4: "w", 20: "b"]
        #expect(ran == expected)
        #expect(started == expected)
    }

    @Test(arguments: Backend.allCases)
    func aLoopThatDoesNotPropagateLeavesEffectsWithoutTheirCallersContext(backend: Backend) async throws {
        let (ran, started) = try await Self.interleave(backend, propagation: .disabled)
        let expected = [1: "none", 2: "none", 3: "none", 4: "none", 20: "none"]
        #expect(ran == expected)
        #expect(started == expected)
    }

    @Test(arguments: Backend.allCases)
    func eventsACallbackEffectSendsFromAnotherThreadCarryItsCause(backend: Backend) async throws {
        let ran = Locked<[Int: String]>([:])
        let sinks = Locked<[Sink<Counter.Event>]>([])
        let ended = CountdownLatch()
        let loop = Loop(
            initial: Counter.State(),
            reduce: Counter.reduce,
            feedbacks: [
                .skippingRepeated({ $0.query }) { _ in
                    .callback { sink in
                        sinks.append(sink)
                        return Cancellation {}
                    }
                },
                .requests({ Set($0.history) }) { value in
                    .run { _ in
                        ran.withLock { $0[value] = ServiceContext.currentRequest }
                        ended.increment()
                    }
                },
            ],
            backend: backend,
            configuration: LoopConfiguration(serviceContext: .enabled))
        ServiceContext.$current.withValue(.request("a")) { loop.send(.setQuery(1)) }
        try await Self.waitForDrainToEnd(loop)
        let sink = try #require(sinks.current.first)
        // From a thread that runs for no request, after the loop went idle: the drain it begins
        // has no context of its own to lend.
        await onThreads(1) { _ in sink(.record(1)) }
        try await withDeadline("the effect of the callback's event") { await ended.wait(for: 1) }
        #expect(ran.current == [1: "a"])
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func aChildFeaturesEffectsRunInTheContextOfTheirCause(backend: Backend) async throws {
        let ran = Locked<[Int: String]>([:])
        let started = Locked<[String]>([])
        let sinks = Locked<[Sink<Counter.Event>]>([])
        let ended = CountdownLatch()
        let child = ChildScope<Parent.State, Parent.Event, Counter.State, Counter.Event>(
            state: StatePath(\Parent.State.child),
            event: EventPath(embed: Parent.Event.child, extract: { if case .child(let event) = $0 { event } else { nil } }))
        let loop = Loop(
            initial: Parent.State(),
            reduce: child.reducer(Counter.reduce),
            feedbacks: [
                child.feedback([
                    .skippingRepeated({ $0.query }) { _ in
                        .callback { sink in
                            started.append(ServiceContext.currentRequest)
                            sinks.append(sink)
                            return Cancellation {}
                        }
                    },
                    .requests({ Set($0.history) }) { value in
                        .run { _ in
                            ran.withLock { $0[value] = ServiceContext.currentRequest }
                            ended.increment()
                        }
                    },
                ])
            ],
            backend: backend,
            configuration: LoopConfiguration(serviceContext: .enabled))
        await loop.waitUntilIdle()
        ServiceContext.$current.withValue(.request("a")) { loop.send(.child(.setQuery(1))) }
        try await Self.waitForDrainToEnd(loop)
        let sink = try #require(sinks.current.first)
        await onThreads(1) { _ in sink(.record(1)) }
        try await withDeadline("the child's effect") { await ended.wait(for: 1) }
        #expect(started.current == ["a"])
        #expect(ran.current == [1: "a"])
        await loop.stop()
    }

    /// A loop that does not propagate pays nothing in its queue: the traced case's payload is
    /// boxed, so an item is no larger than one of a queue without it.
    @Test(arguments: [
        (MemoryLayout<QueueItem<Int, Int>>.size, MemoryLayout<UntracedItem<Int, Int>>.size),
        (MemoryLayout<QueueItem<Counter.State, Counter.Event>>.size, MemoryLayout<UntracedItem<Counter.State, Counter.Event>>.size),
        (MemoryLayout<QueueItem<String, String>>.size, MemoryLayout<UntracedItem<String, String>>.size),
    ])
    func queueItemsAreNoLargerForIt(traced: Int, untraced: Int) {
        #expect(traced == untraced)
    }

    /// ``QueueItem`` as it would be without ``QueueItem/traced(_:_:)``.
    enum UntracedItem<State: Sendable, Event: Sendable> {
        case event(Event, EffectHandle?)
        case submit(Event, UnsafeContinuation<State, any Error>)
        case start
        case addObserver(ObserverEntry<State>)
        case removeObserver(Int)
    }

    /// Returns once `loop` has reduced everything sent so far and given up the drain role
    /// (``Loop/waitUntilIdle()`` would wait for the never-ending callback effects too).
    static func waitForDrainToEnd<State, Event>(_ loop: Loop<State, Event>) async throws {
        try await waitUntil("the drain to end") {
            loop.engine.lock.withLock { $0.phase == .idle && $0.items.isEmpty }
        }
    }

    /// A parent whose only state is a child feature.
    enum Parent {
        struct State: Equatable, Sendable {
            var child = Counter.State()
        }

        enum Event: Equatable, Sendable {
            case child(Counter.Event)
        }
    }

    /// Events still queued when stop begins are reported to `onDrop` by the caller of `stop()`,
    /// but each in its sender's context, as every drop of a loop that propagates: an instrument
    /// files each under its own request (a tracer, its drop span).
    @Test(arguments: Backend.allCases)
    func eventsDiscardedAtStopAreReportedInTheirSendersContext(backend: Backend) async throws {
        let dropped = Locked<[String]>([])
        let loop = Loop(
            initial: Counter.State(), reduce: Counter.reduce, backend: backend,
            configuration: LoopConfiguration(serviceContext: .enabled),
            instrumentation: LoopInstrumentation(onDrop: { _, reason in
                if reason == .discardedAtStop { dropped.withLock { $0.append(ServiceContext.currentRequest) } }
            }))
        try await withDrainHeld(loop, by: .increment, at: { $0.count == 1 }) { release in
            ServiceContext.$current.withValue(.request("a")) { loop.send(.increment) }
            ServiceContext.$current.withValue(.request("b")) { loop.send(.increment) }
            let stopped = Task { await ServiceContext.$current.withValue(.request("stopper")) { await loop.stop() } }
            try await waitUntil("stop to begin") { loop.statistics.eventsDiscardedAtStop == 2 }
            release.open()
            try await withDeadline("stop") { await stopped.value }
        }
        #expect(dropped.current.sorted() == ["a", "b"])
    }
}