import FeedbackLoop
import FeedbackLoopDurable
import FeedbackLoopDurableTesting
import Foundation
import Testing
import XCTest

/// The durable test kit, on every backend: what passes, and that each kind of mistake fails.
@Suite("DurableTestLoop")
struct DurableTestLoopTests {
    @Test(arguments: Backend.allCases)
    func sendReceiveRestart(backend: Backend) async throws {
        let effects = Probe<Ledger.EffectEntry>()
        let loop = try await DurableTestLoop(
            initial: Ledger.State(), reduce: Ledger.reduce, given: [.add(10), .add(5)],
            feedbacks: { Ledger.feedbacks($0, effects: effects, charger: .answers) }, backend: backend)
        #expect(loop.state.total == 15)
        await loop.send(.charge(5)) {
            $0.pendingCharge = 5
            $0.count = 3
        }
        await loop.receive(.charged(5)) {
            $0.pendingCharge = nil
            $0.charged = [5]
            $0.count = 4
        }
        await loop.restart()
        await loop.send(.add(1)) {
            $0.total = 16
            $0.count = 5
        }
        #expect(try await loop.journaled == [.add(10), .add(5), .charge(5), .charged(5), .add(1)])
        await loop.finish()
    }

    /// The recovered loop starts the effect its state asks for again (a new start, with the
    /// same stable key): restarted from state, not replayed.
    @Test(arguments: Backend.allCases)
    func restartStartsTheEffectsTheStateAsksFor(backend: Backend) async throws {
        let effects = Probe<Ledger.EffectEntry>()
        let loop = try await DurableTestLoop(
            initial: Ledger.State(), reduce: Ledger.reduce,
            feedbacks: { Ledger.feedbacks($0, effects: effects, charger: .hangs) }, backend: backend)
        await loop.send(.charge(7)) {
            $0.pendingCharge = 7
            $0.count = 1
        }
        try await effects.wait(for: "the charge to start") { $0.count == 1 }
        await loop.restart()
        try await effects.wait(for: "the charge to start again") { $0.filter { $0.startedAmount == 7 }.count == 2 }
        #expect(effects.entries.contains(.cancelled(7)))
        #expect(try await loop.journaled == [.charge(7)])
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func aWrongExpectationFailsWithADiff(backend: Backend) async throws {
        let loop = try await DurableTestLoop(initial: Ledger.State(), reduce: Ledger.reduce, backend: backend)
        await withKnownIssue {
            await loop.send(.add(2)) {
                $0.total = 3
                $0.count = 1
            }
        } matching: { issue in
            let text = issue.description
            return text.contains("State mismatch: sending Ledger.Event.add(2)") && text.contains("−   total: 3") && text.contains("+   total: 2")
        }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func anUnassertedChangeFails(backend: Backend) async throws {
        let loop = try await DurableTestLoop(initial: Ledger.State(), reduce: Ledger.reduce, backend: backend)
        await withKnownIssue {
            await loop.send(.add(2))
        } matching: { $0.description.contains("Unasserted state change") }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func anUnreceivedEffectEventFails(backend: Backend) async throws {
        let loop = try await DurableTestLoop(
            initial: Ledger.State(), reduce: Ledger.reduce,
            feedbacks: { Ledger.feedbacks($0, effects: Probe(), charger: .answers) }, backend: backend)
        await loop.send(.charge(1)) {
            $0.pendingCharge = 1
            $0.count = 1
        }
        // Wait for the answer to be journaled without receiving it.
        try await loop.loop.waitForSequence(2)
        await withKnownIssue {
            await loop.finish()
        } matching: { $0.description.contains("Unreceived events: 1 before the end of the test") && $0.description.contains(".charged(1)") }
    }

    @Test(arguments: Backend.allCases)
    func aReducerThatRecoversDifferentlyFails(backend: Backend) async throws {
        // A reducer that reads a clock: the live loop and its recovery disagree.
        let runs = Lock(0)
        let loop = try await DurableTestLoop(
            initial: 0, reduce: { (state: inout Int, event: Int) in state += event + runs.withLock { $0 } },
            backend: backend)
        await loop.send(1) { $0 = 1 }
        runs.withLock { $0 = 100 }
        await withKnownIssue {
            await loop.restart()
        } matching: { $0.description.contains("Recovered state differs") }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func anEventThatIsNeverJournaledFailsAfterTheTimeout(backend: Backend) async throws {
        let loop = try await DurableTestLoop(
            initial: Ledger.State(), reduce: Ledger.reduce, backend: backend, timeout: .milliseconds(50))
        await withKnownIssue {
            await loop.receive(.charged(3))
        } matching: { $0.description.contains("Event not journaled: waited") }
        await loop.finish()
    }
}

extension DurableLoop {
    /// Returns once the loop has reduced event `sequence`; fails after 30 s.
    func waitForSequence(_ sequence: UInt64) async throws {
        let seen = Probe<UInt64>()
        let observation = observe { [self] _ in seen.record(self.sequence) }
        defer { observation.cancel() }
        try await seen.wait(for: "event \(sequence) to be reduced") { $0.contains { $0 >= sequence } }
    }
}

/// The kit under XCTest: the same calls, failures through `XCTFail`.
final class DurableTestLoopXCTests: XCTestCase {
    func testSendReceiveRestart() async throws {
        let loop = try await DurableTestLoop(
            initial: Ledger.State(), reduce: Ledger.reduce,
            feedbacks: { Ledger.feedbacks($0, effects: Probe(), charger: .answers) }, backend: .actor)
        await loop.send(.charge(2)) {
            $0.pendingCharge = 2
            $0.count = 1
        }
        await loop.receive(.charged(2)) {
            $0.pendingCharge = nil
            $0.charged = [2]
            $0.count = 2
        }
        await loop.restart()
        await loop.finish()
    }
}
