@testable import FeedbackLoop
import Foundation
import SharedTestSupport
import Testing

/// Holds `loop`'s drain role on purpose while `body` runs, so that later sends pile up in the
/// queue: `trigger` is sent from a dedicated thread, and the observer that sees the first state
/// matching `holdsAt` blocks there until `body` opens the gate it is given (or returns or throws:
/// the gate is opened and the observer removed on every exit path). Runs in its blocking turn.
func withDrainHeld<State: Sendable, Event: Sendable, T>(
    _ loop: Loop<State, Event>,
    by trigger: Event,
    at holdsAt: @escaping @Sendable (State) -> Bool,
    _ body: (_ release: DispatchGate) async throws -> T
) async throws -> T {
    try await withBlockingTurn {
        let holding = Latch()
        let release = DispatchGate()
        let alreadyHeld = Lock(false)
        let token = loop.observe { state in
            guard holdsAt(state) else { return }
            let isFirst = alreadyHeld.withLock { held -> Bool in
                defer { held = true }
                return !held
            }
            guard isFirst else { return }
            holding.add("held")
            release.wait()
        }
        defer {
            release.open()
            token.cancel()
        }
        Thread { loop.send(trigger) }.start()
        try await withDeadline("the drain to be held") { await holding.wait(for: ["held"]) }
        return try await body(release)
    }
}

extension Loop {
    /// Events and `sendAndWait` calls waiting in the queue, and `sendAndWait` calls parked for
    /// room in a bounded one: what a test waits for before it stops the loop, so that it knows
    /// which of its sends stop will discard.
    var waiting: (queued: Int, parked: Int) {
        engine.lock.withLock { ($0.items.count, $0.parked.count) }
    }
}

/// Polls `condition` (yielding between checks) until it holds, failing loudly after the deadline.
/// For conditions no callback announces, such as a counter another thread updates.
func waitUntil(_ what: String, _ condition: @escaping @Sendable () -> Bool) async throws {
    try await withDeadline(what) {
        while !condition() {
            try Task.checkCancellation()
            await Task.yield()
        }
    }
}

/// A gate that blocks a thread (not a task) until opened: for holding the drain role on purpose.
final class DispatchGate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    func open() { semaphore.signal() }

    /// Blocks until `open()`; after 60 s it records a test failure and lets the thread go.
    func wait() {
        if semaphore.wait(timeout: .now() + 60) == .timedOut {
            Issue.record("a DispatchGate was never opened")
        }
    }
}
