import FeedbackLoop
import Foundation

/// Holds `loop`'s drain role on purpose while `body` runs, so that later sends pile up in the
/// queue: `trigger` is sent from a dedicated thread, and the observer that sees the first state
/// matching `holdsAt` blocks there until `body` opens the gate it is given (or returns or throws:
/// the gate is opened and the observer removed on every exit path). Runs in its blocking turn.
public func withDrainHeld<State: Sendable, Event: Sendable, T>(
    _ loop: Loop<State, Event>,
    by trigger: Event,
    at holdsAt: @escaping @Sendable (State) -> Bool,
    _ body: (_ release: DispatchGate) async throws -> T
) async throws -> T {
    try await withBlockingTurn {
        let holding = Gate()
        let release = DispatchGate()
        let token = loop.observe { state in
            if holdsAt(state) && !holding.isOpen {
                holding.open()
                release.wait()
            }
        }
        defer {
            release.open()
            token.cancel()
        }
        Thread { loop.send(trigger) }.start()
        try await withDeadline("the drain to be held") { await holding.wait() }
        return try await body(release)
    }
}
