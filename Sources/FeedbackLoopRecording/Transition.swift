/// One step of a `Loop`: the state before the reducer ran, the event it reduced,
/// and the state it produced — what `LoopInstrumentation.onTransition` sees.
public struct Transition<State: Sendable, Event: Sendable>: Sendable {
    /// The state the reducer started from.
    public var before: State
    /// The event it reduced.
    public var event: Event
    /// The state it produced.
    public var after: State

    public init(before: State, event: Event, after: State) {
        self.before = before
        self.event = event
        self.after = after
    }
}

extension Transition: Equatable where State: Equatable, Event: Equatable {}
extension Transition: Hashable where State: Hashable, Event: Hashable {}
extension Transition: Encodable where State: Encodable, Event: Encodable {}
extension Transition: Decodable where State: Decodable, Event: Decodable {}
