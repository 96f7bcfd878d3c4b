import FeedbackLoop
import Testing

/// Rule: `send` from code isolated to an actor on the loop's executor (`LoopConfiguration.executor`)
/// keeps every rule of `send`: events are reduced in the order their `send` calls returned, and a
/// call made while the loop is draining (from its own observer, on that executor) is queued behind
/// the event being reduced, never reduced inside it. On ``Backend/actor``, whose reducer runs on
/// that executor, an idle loop reduces such an event before `send` returns, as ``Backend/callback``
/// always does; the other backends ignore the executor and the caller's isolation.
@Suite("Send from the loop's executor")
struct SendIsolationTests {
    /// Whether an idle loop on `backend` reduces an event sent from its executor before `send`
    /// returns.
    static func reducesInPlace(_ backend: Backend) -> Bool {
        switch backend {
        case .actor, .callback: true
        case .stream: false
        }
    }

    static func loop(_ backend: Backend, on executor: QueueExecutor) -> Loop<[Int], Int> {
        Loop(
            initial: [], reduce: { events, event in events.append(event) }, backend: backend,
            configuration: LoopConfiguration(executor: executor))
    }

    @Test(arguments: Backend.allCases)
    func eventsFromAnActorOnTheExecutorKeepTheirOrderWithEarlierOnes(backend: Backend) async throws {
        let executor = QueueExecutor()
        let loop = Self.loop(backend, on: executor)
        let sender = SenderOnExecutor(executor)
        for event in 0..<100 { loop.send(event) }
        await sender.send(100..<200, to: loop)
        try await withDeadline("the loop settles") { await loop.waitUntilIdle() }
        #expect(loop.state == Array(0..<200))

        let seen = await sender.sendAndRead(200, to: loop)
        if Self.reducesInPlace(backend) {
            #expect(seen == Array(0...200), "an idle loop reduces the event before send returns")
        }
        try await withDeadline("the loop settles") { await loop.waitUntilIdle() }
        #expect(loop.state == Array(0...200))
        #expect(loop.statistics.eventsReduced == 201)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func aSendFromTheLoopsOwnObserverOnTheExecutorIsQueuedBehindTheEventBeingReduced(backend: Backend) async throws {
        let executor = QueueExecutor()
        let loop = Self.loop(backend, on: executor)
        let sender = SenderOnExecutor(executor)
        let seen = Locked<[[Int]]>([])
        let observation = loop.observe { events in
            seen.append(events)
            guard events == [1] else { return }
            // On `actor` the observer runs on the executor, as the sender's own code would.
            if executor.isCurrent {
                sender.assumeIsolated { sender in loop.send(10, isolation: sender) }
            } else {
                loop.send(10)
            }
            seen.append([-1])  // the observer's call returned
        }
        try await withDeadline("the observer has the initial state") { await loop.waitUntilIdle() }

        let afterSend = await sender.sendAndRead(1, to: loop)
        if Self.reducesInPlace(backend) {
            #expect(afterSend == [1, 10], "the queued event is reduced in the same call, after the observer returned")
        }
        try await withDeadline("the loop settles") { await loop.waitUntilIdle() }
        #expect(loop.state == [1, 10])
        #expect(seen.current == [[], [1], [-1], [1, 10]])
        observation.cancel()
        await loop.stop()
    }
}

/// Code isolated to an actor that runs on the loop's executor, as an actor on a SwiftNIO event
/// loop shares it with a loop configured with `eventLoop.executor`.
actor SenderOnExecutor {
    let executor: QueueExecutor

    init(_ executor: QueueExecutor) {
        self.executor = executor
    }

    nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    func send(_ events: Range<Int>, to loop: Loop<[Int], Int>) {
        for event in events { loop.send(event) }
    }

    /// Sends `event`, then reads the loop's state at once.
    func sendAndRead(_ event: Int, to loop: Loop<[Int], Int>) -> [Int] {
        loop.send(event)
        return loop.state
    }
}
