import FeedbackLoop
import Logging
import Testing

/// Rule 10: an effect may call its own loop's `stop()`, `run()` and `waitUntilIdle()` without
/// waiting for itself; and `stop(timeout:clock:)` bounds the wait for effects that ignore
/// cancellation, naming them.
@Suite("10. Effects that call their own loop never wait for themselves")
struct SelfCallTests {
    typealias CounterLoop = Loop<Counter.State, Counter.Event>

    /// A loop with a never-ending effect (feedback 0, counts its end in `log`) and `effect`,
    /// started by `.setFlag(true)` (feedback 1), which gets the loop.
    private func makeLoop(
        _ backend: Backend,
        log: Locked<[String]>,
        configuration: LoopConfiguration = LoopConfiguration(),
        effect: @escaping @Sendable (CounterLoop) async -> Void
    ) -> (CounterLoop, Locked<CounterLoop?>) {
        let box = Locked<CounterLoop?>(nil)
        let loop = Loop(
            initial: Counter.State(),
            reduce: Counter.reduce,
            feedbacks: [
                .requests({ _ in [0] }) { _ in
                    .run { _ in
                        await suspendUntilCancelled()
                        log.append("other effect ended")
                    }
                },
                .whenBecomesTrue({ $0.flag }) { _ in
                    .run { _ in
                        guard let loop = box.current else { return }
                        await effect(loop)
                    }
                },
            ],
            backend: backend,
            configuration: configuration)
        box.withLock { $0 = loop }
        return (loop, box)
    }

    @Test(arguments: Backend.allCases)
    func stopFromInsideAnEffectReturnsOnceEveryOtherEffectHasEnded(backend: Backend) async throws {
        let log = Locked<[String]>([])
        let (loop, box) = makeLoop(backend, log: log) { loop in
            await loop.stop()
            log.append("stop returned inside the effect")
            await loop.stop()  // idempotent, and still does not wait for itself
            log.append("effect ended")
        }
        loop.send(.setFlag(true))
        try await withDeadline("stop from outside, after the effect's own") {
            try await waitUntil("the effect's stop to return") { log.current.contains("stop returned inside the effect") }
            await loop.stop()
        }
        #expect(log.current == ["other effect ended", "stop returned inside the effect", "effect ended"])
        #expect(loop.statistics.effectsRunning == 0)
        box.withLock { $0 = nil }
    }

    @Test(arguments: Backend.allCases)
    func runFromInsideAnEffectReturnsWhenTheLoopStopsWithoutWaitingForItself(backend: Backend) async throws {
        let log = Locked<[String]>([])
        let inRun = Gate()
        let (loop, box) = makeLoop(backend, log: log) { loop in
            inRun.open()
            await loop.run()
            log.append("run returned inside the effect")
        }
        loop.send(.setFlag(true))
        try await withDeadline("the effect to call run()") { await inRun.wait() }
        try await withDeadline("stop") { await loop.stop() }
        #expect(log.current == ["other effect ended", "run returned inside the effect"])
        box.withLock { $0 = nil }
    }

    @Test(arguments: Backend.allCases)
    func waitUntilIdleFromInsideAnEffectIsReportedAndReturnsAtOnce(backend: Backend) async throws {
        let log = Locked<[String]>([])
        let logged = Locked<[(level: Logger.Level, message: String)]>([])
        let (loop, box) = makeLoop(
            backend, log: log,
            configuration: LoopConfiguration(logger: CapturingLogHandler.logger(into: logged))
        ) { loop in
            await loop.waitUntilIdle()
            log.append("waitUntilIdle returned inside the effect")
        }
        loop.send(.setFlag(true))
        try await waitUntil("waitUntilIdle to return inside the effect") {
            log.current.contains("waitUntilIdle returned inside the effect")
        }
        let errors = logged.current.filter { $0.level == .error }
        #expect(errors.count == 1)
        #expect(errors.first?.message.contains("waitUntilIdle() called from inside") == true)
        await loop.stop()
        box.withLock { $0 = nil }
    }

    @Test(arguments: Backend.allCases)
    func aBoundedStopReportsTheEffectsThatIgnoredCancellation(backend: Backend) async throws {
        let started = Gate()
        let letGo = Gate()
        let loop = Loop(
            initial: Counter.State(query: 1),
            reduce: Counter.reduce,
            feedbacks: [
                .requests({ _ in [0] }) { _ in .run { _ in await suspendUntilCancelled() } },
                .skippingRepeated({ $0.query }) { _ in
                    .run { _ in
                        started.open()
                        await letGo.wait()  // ignores cancellation
                    }
                },
            ],
            backend: backend)
        try await withDeadline("the stubborn effect to start") { await started.wait() }
        let report = try await withDeadline("the bounded stop") {
            await loop.stop(timeout: .milliseconds(50))
        }
        #expect(!report.stoppedInTime)
        #expect(report.unfinishedEffects.map(\.feedback) == [1])
        letGo.open()
        try await withDeadline("the stop") { await loop.stop() }
        #expect(loop.statistics.effectsCancelled == 2)
    }

    @Test(arguments: Backend.allCases)
    func aBoundedStopWhoseEffectsEndInTimeSaysSo(backend: Backend) async throws {
        let loop = Loop(
            initial: Counter.State(query: 1),
            reduce: Counter.reduce,
            feedbacks: [.skippingRepeated({ $0.query }) { _ in .run { _ in await suspendUntilCancelled() } }],
            backend: backend)
        let report = try await withDeadline("the bounded stop") { await loop.stop(timeout: .seconds(60)) }
        #expect(report.stoppedInTime)
        #expect(report.unfinishedEffects.isEmpty)
    }
}
