import FeedbackLoop
import FeedbackLoopServices
import Logging
import MetricsTestKit
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

/// Every wait below is on a continuation or the manual clock; the time limit only turns a lost
/// wake-up into a failure.
@Suite(.timeLimit(.minutes(5)))
struct LoopRegistryTests {
    typealias Registry = LoopRegistry<String, Jobs.State, Jobs.Event>
    typealias Ended = (id: String, report: Registry.Report, exit: Registry.Exit)

    /// Loops whose initial `total` is their serial number, so that a state tells which loop it
    /// came from; every loop made is kept for the test to inspect.
    final class Maker: Sendable {
        let backend: Backend
        let probe = Jobs.Probe()
        private let made = Lock<[Loop<Jobs.State, Jobs.Event>]>([])  // the core's Lock: TSan-clean under -DTSAN

        init(backend: Backend) { self.backend = backend }

        func makeLoop(_ id: String) -> Loop<Jobs.State, Jobs.Event> {
            made.withLock { made in
                let loop = Loop(
                    initial: Jobs.State(total: made.count), reduce: Jobs.reduce, feedbacks: probe.feedbacks,
                    backend: backend,
                    configuration: LoopConfiguration(label: "jobs", logger: .quiet, onEffectError: { _ in }))
                made.append(loop)
                return loop
            }
        }

        var loops: [Loop<Jobs.State, Jobs.Event>] { made.withLock { $0 } }
    }

    @Test("one loop per id, created once on first use even by concurrent first uses", arguments: Backend.allCases)
    func oneLoopPerID(backend: Backend) async throws {
        let maker = Maker(backend: backend)
        let registry = Registry(configuration: .init(logger: .quiet), clock: ManualClock(), makeLoop: maker.makeLoop)

        try await withThrowingTaskGroup(of: Bool.self) { uses in
            for _ in 0..<50 {
                uses.addTask { try await registry.withLoop(for: "a") { $0.created } }
            }
            var created = 0
            for try await wasCreated in uses where wasCreated { created += 1 }
            #expect(created == 1)
        }
        #expect(maker.loops.count == 1)
        #expect(try await registry.sendAndWait(.add(5), to: "a").total == 5)
        #expect(try await registry.sendAndWait(.add(7), to: "b").total == 1 + 7, "b's own loop, the second made")
        #expect(try await registry.sendAndWait(.add(1), to: "a").total == 6)
        #expect(registry.existing("c") == nil)
        await #expect(throws: LoopRegistryError.noSuchLoop) {
            try await registry.withLoop(for: "c", creatingIfAbsent: false) { _ in }
        }
        #expect(Set(registry.ids) == ["a", "b"])
        #expect(registry.statistics == .init(live: 2, created: 2))
        for loop in maker.loops { await loop.stop() }
    }

    @Test("an idle loop is drained and evicted after the idle timeout; a use or a lease defers it", arguments: Backend.allCases)
    func idleEviction(backend: Backend) async throws {
        let maker = Maker(backend: backend)
        let clock = ManualClock()
        let ended = Delivery<Ended>()
        let metrics = TestMetrics()
        let registry = Registry(
            configuration: .init(
                idleTimeout: .seconds(60), gracePeriod: .seconds(5), logger: .quiet,
                metrics: LoopRegistryMetrics(label: "jobs", factory: metrics)),
            clock: clock, makeLoop: maker.makeLoop, onLoopEnded: { ended.deliver(($0, $1, $2)) })
        func at(_ seconds: Int64) -> ManualClock.Instant { .init(offset: .seconds(seconds)) }

        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await registry.run() }
                #expect(try await registry.sendAndWait(.add(1), to: "a").total == 1)
                await clock.waitForSleeper(until: at(60))

                clock.advance(by: .seconds(30))
                #expect(try await registry.sendAndWait(.add(2), to: "a").total == 3, "a use at 30 s")
                clock.advance(by: .seconds(30))
                // The sweeper woke at 60 s, found a used at 30 s, and now sleeps until 90 s.
                await clock.waitForSleeper(until: at(90))
                #expect(registry.count == 1)
                #expect(ended.values.isEmpty)

                clock.advance(by: .seconds(30))
                await ended.waitForCount(1)
                let evicted = try #require(ended.values.first)
                #expect(evicted.id == "a")
                #expect(evicted.exit == .evicted)
                #expect(evicted.report.ending == .drained)
                #expect(evicted.report.finalState.total == 3)
                #expect(registry.count == 0)

                // A lease keeps a loop however long it lasts; its idle time starts at its end.
                try await registry.withLoop(for: "b") { lease in
                    #expect(lease.created)
                    clock.advance(by: .seconds(600))  // 690 s
                    await clock.waitForSleeper(until: at(690 + 60))
                    #expect(registry.existing("b") != nil)
                }
                clock.advance(by: .seconds(60))
                await ended.waitForCount(2)
                #expect(ended.values.last?.id == "b")

                // The next use of an evicted id gets a new loop.
                let fresh = try await registry.withLoop(for: "a") { $0 }
                #expect(fresh.created)
                #expect(fresh.loop.state.total == 2, "the third loop made")

                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
        #expect(registry.statistics == .init(live: 0, created: 3, evicted: 2, ended: 3))
        #expect(ended.values.last?.exit == .shutdown)
        #expect(try metrics.expectCounter("jobs_loops_created_total").totalValue == 3)
        #expect(try metrics.expectCounter("jobs_loops_evicted_total").totalValue == 2)
        #expect(try metrics.expectMeter("jobs_loops_live").lastValue == 0.0)
    }

    @Test("past the cap a use fails with tooManyLoops and nothing is dropped", arguments: Backend.allCases)
    func cap(backend: Backend) async throws {
        let maker = Maker(backend: backend)
        let metrics = TestMetrics()
        let registry = Registry(
            configuration: .init(
                maximumLoops: 2, logger: .quiet, metrics: LoopRegistryMetrics(label: "jobs", factory: metrics)),
            clock: ManualClock(), makeLoop: maker.makeLoop)

        #expect(try await registry.sendAndWait(.add(10), to: "a").total == 10)
        #expect(try await registry.sendAndWait(.add(20), to: "b").total == 21)
        await #expect(throws: LoopRegistryError.tooManyLoops) {
            try await registry.sendAndWait(.add(30), to: "c")
        }
        #expect(maker.loops.count == 2, "no loop was made for c")
        #expect(try await registry.sendAndWait(.add(1), to: "a").total == 11, "a is untouched")
        #expect(registry.existing("b")?.loop.state.total == 21, "b is untouched")
        #expect(registry.statistics.refused == 1)
        let refused = try metrics.expectCounter("jobs_loops_refused_total", [("reason", "tooManyLoops")])
        #expect(refused.totalValue == 1)

        #expect(await registry.remove("a")?.total == 11)
        #expect(try await registry.sendAndWait(.add(30), to: "c").total == 2 + 30, "removing a made room")
        #expect(registry.statistics == .init(live: 2, created: 3, removed: 1, refused: 1))
        for loop in maker.loops { await loop.stop() }
    }

    @Test("remove stops the loop now, cancelling its effects", arguments: Backend.allCases)
    func remove(backend: Backend) async throws {
        let maker = Maker(backend: backend)
        let ended = Delivery<Ended>()
        let registry = Registry(
            configuration: .init(logger: .quiet), clock: ManualClock(), makeLoop: maker.makeLoop,
            onLoopEnded: { ended.deliver(($0, $1, $2)) })

        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await registry.run() }
                try await registry.sendAndWait(.startStuck, to: "a")
                await maker.probe.stuckStarted.wait()

                let finalState = try #require(await registry.remove("a"))
                #expect(finalState.stuckRequested)
                #expect(maker.probe.stuckCancelled.isOpen)
                #expect(registry.count == 0)
                #expect(await registry.remove("a") == nil)
                await ended.waitForCount(1)
                #expect(ended.values.first?.exit == .removed)

                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
    }

    @Test("graceful shutdown drains every loop by LoopService's rules and creates no more", arguments: Backend.allCases)
    func gracefulShutdown(backend: Backend) async throws {
        let maker = Maker(backend: backend)
        let ended = Delivery<Ended>()
        let registry = Registry(
            configuration: .init(gracePeriod: .seconds(60), logger: .quiet), clock: ManualClock(),
            makeLoop: maker.makeLoop, onLoopEnded: { ended.deliver(($0, $1, $2)) })
        let ids = ["a", "b", "c"]

        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await registry.run() }
                for id in ids {
                    #expect(try await registry.send(.startQuick, to: id))
                }
                await maker.probe.quickStarted.wait()

                trigger.triggerGracefulShutdown()
                await registry.waitUntilShuttingDown()
                #expect(!registry.isAcceptingLoops)
                await #expect(throws: LoopRegistryError.shuttingDown) {
                    try await registry.sendAndWait(.add(1), to: "d")
                }
                let a = try #require(registry.existing("a"))
                await a.waitUntilShuttingDown()
                await #expect(throws: LoopServiceError.notAcceptingEvents) {
                    try await a.sendAndWait(.add(1))
                }
                #expect(ended.values.isEmpty, "every loop waits for its quick job")

                maker.probe.releaseQuick.open()
                try await group.waitForAll()
            }
        }
        #expect(Set(ended.values.map(\.id)) == Set(ids))
        for (id, report, exit) in ended.values {
            #expect(exit == .shutdown, "\(id)")
            #expect(report.ending == .drained, "\(id)")
            #expect(report.finalState.quickDone, "\(id)")
        }
        #expect(registry.statistics == .init(live: 0, created: 3, ended: 3, refused: 1))
    }

    @Test("a registry runs once", arguments: Backend.allCases)
    func runTwice(backend: Backend) async throws {
        let registry = Registry(configuration: .init(logger: .quiet), clock: ManualClock(), makeLoop: Maker(backend: backend).makeLoop)
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await registry.run() }
                group.addTask { try await registry.run() }
                await #expect(throws: LoopRegistryError.alreadyRun) { try await group.next() }
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
    }

    /// The race of the hand-written session map: a removal's late end took out the entry of the
    /// id, which by then was a newer loop, leaving that loop running outside the registry.
    @Test("create and remove of one id raced 1,000 times: every answer matches the registry, no loop orphaned",
          arguments: Backend.allCases)
    func createRemoveRace(backend: Backend) async throws {
        let maker = Maker(backend: backend)
        let ended = Delivery<Ended>()
        let registry = Registry(
            configuration: .init(maximumLoops: 2, idleTimeout: nil, logger: .quiet), clock: ManualClock(),
            makeLoop: maker.makeLoop, onLoopEnded: { ended.deliver(($0, $1, $2)) })

        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await registry.run() }
                var previous: Int?  // the serial of the loop the registry held before the round
                var removals = 0
                for round in 0..<1_000 {
                    async let opening = registry.withLoop(for: "x") { ($0.created, $0.loop.state.total) }
                    async let removing = registry.remove("x")
                    let (created, serial) = try await opening
                    let removed = await removing?.total
                    // Let the removed loop's end land before looking: that late end is what took
                    // out the newer loop's entry.
                    if removed != nil { removals += 1 }
                    await ended.waitForCount(removals)
                    let current = registry.existing("x")?.loop.state.total

                    if removed == serial {
                        // Open, then remove: the loop open returned is gone.
                        #expect(current == nil, "round \(round)")
                    } else {
                        // Remove (of the previous loop, or of nothing), then open.
                        #expect(removed == previous, "round \(round)")
                        #expect(current == serial, "round \(round): open answered \(serial), the registry holds \(String(describing: current))")
                        #expect(created, "round \(round)")
                    }
                    #expect(registry.count == (current == nil ? 0 : 1), "round \(round)")
                    previous = current
                }
                await registry.remove("x")

                // Every loop made has stopped: none runs outside the registry. A probe event is
                // dropped (and counted) by a stopped loop, reduced by a running one.
                var orphans: [Int] = []
                for (serial, loop) in maker.loops.enumerated() {
                    loop.send(.add(0))
                    await loop.waitUntilIdle()
                    if loop.statistics.eventsDroppedAfterStop == 0 { orphans.append(serial) }
                }
                #expect(orphans.isEmpty, "loops running outside the registry: \(orphans)")
                #expect(registry.statistics.created == maker.loops.count)
                #expect(registry.count == 0)
                if orphans.isEmpty {
                    await ended.waitForCount(maker.loops.count)
                    #expect(ended.values.allSatisfy { $0.exit == .removed })
                }
                for loop in maker.loops { await loop.stop() }
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
    }
}
