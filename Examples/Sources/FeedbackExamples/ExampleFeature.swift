import FeedbackLoop

/// The shape every example shares: a namespace with a `State`, an `Event`, a pure reducer and the
/// feedbacks that run its effects, given the dependencies in its `Environment`.
///
/// Keeping the definition apart from any running loop is what lets the same feature run on either
/// `Backend` and lets tests call ``reduce(_:_:)`` directly without a loop at all.
public protocol ExampleFeature: SendableMetatype {
    /// Everything the feature remembers. `Equatable` so tests can compare whole states.
    associatedtype State: Equatable & Sendable
    /// Everything that can happen to the feature, from the user or from an effect.
    associatedtype Event: Equatable & Sendable
    /// The services, clocks and event sources the feedbacks need.
    associatedtype Environment: Sendable

    /// The state a new screen starts in.
    static var initialState: State { get }

    /// The only place the state changes. Pure: events that make no sense in the current state
    /// leave it unchanged.
    static func reduce(_ state: inout State, _ event: Event)

    /// The rules that start and cancel effects, built from `environment`.
    static func feedbacks(_ environment: Environment) -> [Feedback<State, Event>]
}

extension ExampleFeature {
    /// Creates and starts a loop running this feature.
    ///
    /// - Parameters:
    ///   - initial: The first state; ``initialState`` unless a test starts elsewhere.
    ///   - environment: The dependencies handed to ``feedbacks(_:)``.
    ///   - backend: The engine that runs the loop.
    ///   - configuration: Capacity, logging and the effect-error hook.
    ///   - instrumentation: Hooks that see each transition, effect and dropped event.
    public static func makeLoop(
        initial: State = initialState,
        environment: Environment,
        backend: Backend,
        configuration: LoopConfiguration = LoopConfiguration(),
        instrumentation: LoopInstrumentation<State, Event>? = nil
    ) -> Loop<State, Event> {
        Loop(
            initial: initial,
            reduce: { state, event in reduce(&state, event) },
            feedbacks: feedbacks(environment),
            backend: backend,
            configuration: configuration,
            instrumentation: instrumentation)
    }
}
