import FeedbackLoop

/// Keeps every transition of a loop in memory, in order: the raw material for a
/// ``StateDiagram`` or for checking a run after the fact.
///
/// ```swift
/// let log = TransitionLog<Player.State, Player.Event>()
/// let loop = Loop(initial: .idle, reduce: Player.reduce, feedbacks: feedbacks,
///                 instrumentation: log.instrumentation)
/// // … run it …
/// print(StateDiagram(log.transitions).mermaid)
/// ```
///
/// The log grows with every event the loop reduces; use it for tests, debugging sessions and
/// bounded runs, not for a loop that runs forever. Safe to read from any thread while the loop
/// runs.
public final class TransitionLog<State: Sendable, Event: Sendable>: Sendable {
    private let entries = Locked<[Transition<State, Event>]>([])

    public init() {}

    /// The instrumentation to pass to `Loop.init(initial:reduce:feedbacks:backend:configuration:instrumentation:)`
    /// (or to combine with others through `LoopInstrumentation.combining(_:)`).
    /// It appends each transition as the loop reduces it, on the drain thread.
    public var instrumentation: LoopInstrumentation<State, Event> {
        LoopInstrumentation(onTransition: { [entries] before, event, after in
            entries.withLock { $0.append(Transition(before: before, event: event, after: after)) }
        })
    }

    /// Every transition recorded so far, in the order the loop reduced them.
    public var transitions: [Transition<State, Event>] {
        entries.withLock { $0 }
    }

    /// The states the loop went through after the first recorded transition's starting state:
    /// `after` of each transition, in order.
    public var states: [State] {
        entries.withLock { $0.map(\.after) }
    }

    /// The events the loop reduced, in order.
    public var events: [Event] {
        entries.withLock { $0.map(\.event) }
    }

    /// Forgets everything recorded so far.
    public func removeAll() {
        entries.withLock { $0.removeAll() }
    }
}
