import FeedbackLoop
import Synchronization
import Testing

/// Records every transition of a loop through its instrumentation: every event reduced and
/// every state produced, in order, none skipped — including states that last a single step.
final class Recorder<State: Sendable, Event: Sendable>: Sendable {
    struct Step: Sendable {
        var before: State
        var event: Event
        var after: State
    }

    private let steps = Lock<[Step]>([])

    var instrumentation: LoopInstrumentation<State, Event> {
        LoopInstrumentation(onTransition: { [self] before, event, after in
            steps.withLock { $0.append(Step(before: before, event: event, after: after)) }
        })
    }

    /// Every event reduced so far.
    var events: [Event] { steps.withLock { $0.map(\.event) } }

    /// Every state the reducer produced so far (not the initial state).
    var states: [State] { steps.withLock { $0.map(\.after) } }

    var count: Int { steps.withLock { $0.count } }

    /// The state after the last transition, if any.
    var last: State? { steps.withLock { $0.last?.after } }
}

extension Recorder where State: Equatable {
    /// Waits until some recorded state equals `state`.
    func waitForState(
        _ state: State, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try await eventually("state \(state)", sourceLocation: sourceLocation) { states.contains(state) }
    }

    /// Waits until `count` transitions were recorded.
    func waitForTransitions(
        _ count: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try await eventually("\(count) transitions", sourceLocation: sourceLocation) { self.count >= count }
    }
}

