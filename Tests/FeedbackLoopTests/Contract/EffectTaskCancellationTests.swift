import FeedbackLoop
import Testing

/// The loop cancels a `.run` effect by cancelling the task its body runs in, and that task only:
/// the body sees `Task.isCancelled`, its cancellation handlers run, and its siblings run on. On
/// `stream`, where effects are children of one task group, this is the rule a group alone cannot
/// keep (it cancels all its children or none).
@Suite("A cancelled effect's task")
struct EffectTaskCancellationTests {
    /// Effects that wait until their task is cancelled, and record which ones saw it.
    final class Waiters: Sendable {
        let gates = Locked<[String: Gate]>([:])
        let started = CountdownLatch()

        /// Opens when the task of the effect named `name` sees its cancellation.
        func cancellation(of name: String) -> Gate {
            gates.withLock { gates in
                if let gate = gates[name] { return gate }
                let gate = Gate()
                gates[name] = gate
                return gate
            }
        }

        func effect<Event>(_ name: String) -> Effect<Event> {
            .run { _ in
                let end = Gate()
                self.started.increment()
                await withTaskCancellationHandler {
                    await end.wait()
                } onCancel: {
                    self.cancellation(of: name).open()
                    end.open()
                }
            }
        }

        func sawCancellation(_ name: String) -> Bool { cancellation(of: name).isOpen }
    }

    static func makeLoop(_ backend: Backend, _ waiters: Waiters) -> Loop<Counter.State, Counter.Event> {
        Loop(
            initial: Counter.State(),
            reduce: Counter.reduce,
            feedbacks: [
                .skippingRepeated({ $0.query }) { query in waiters.effect("query \(query)") },
                .whenBecomesTrue({ $0.flag }) { _ in waiters.effect("flag") },
            ],
            backend: backend)
    }

    @Test(arguments: Backend.allCases)
    func cancellingOneRunEffectCancelsItsTaskAndNoOther(backend: Backend) async throws {
        let waiters = Waiters()
        let loop = Self.makeLoop(backend, waiters)
        try await loop.sendAndWait(.setFlag(true))
        try await loop.sendAndWait(.setQuery(1))
        try await withDeadline("both effects to start") { await waiters.started.wait(for: 2) }

        try await loop.sendAndWait(.setQuery(2))
        try await withDeadline("the replaced effect's task to see its cancellation") {
            await waiters.cancellation(of: "query 1").wait()
        }
        #expect(!waiters.sawCancellation("flag"), "a sibling effect's task was cancelled too")
        #expect(loop.statistics.effectsCancelled == 1)

        await loop.stop()
        #expect(waiters.sawCancellation("flag") && waiters.sawCancellation("query 2"))
    }

    /// On `stream`, an effect started and cancelled within one drain pass is cancelled before its
    /// task exists; the task must still start cancelled, or its body would wait for ever.
    @Test(arguments: Backend.allCases)
    func anEffectCancelledInThePassThatStartedItStillSeesItsCancellation(backend: Backend) async throws {
        let waiters = Waiters()
        let loop = Self.makeLoop(backend, waiters)
        try await withDrainHeld(loop, by: .increment, at: { $0.count == 1 }) { release in
            loop.send(.setQuery(1))
            loop.send(.setQuery(2))
            release.open()
        }
        try await withDeadline("the effect cancelled at once to see its cancellation") {
            await waiters.cancellation(of: "query 1").wait()
        }
        #expect(!waiters.sawCancellation("query 2"))
        #expect(loop.statistics.effectsCancelled == 1)
        await loop.stop()
    }
}
