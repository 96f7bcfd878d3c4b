import FeedbackLoop

/// The counter of "RxFeedback – the simplest architecture": two buttons, plus and minus, and a
/// label. The user is the only feedback, so the loop has no feedbacks of its own: the buttons
/// send events into it.
public enum Counter: ExampleFeature {
    /// The counter needs nothing.
    public struct Environment: Sendable {
        public init() {}
    }

    /// The number on the label.
    public struct State: Hashable, Sendable, Codable, CustomStringConvertible {
        public var count: Int

        public init(count: Int = 0) {
            self.count = count
        }

        public var description: String { "count = \(count)" }
    }

    /// The two buttons.
    public enum Event: String, Hashable, Sendable, Codable, CustomStringConvertible {
        case increment
        case decrement

        public var description: String { rawValue }
    }

    public static var initialState: State { State() }

    /// Plus adds one, minus takes one away.
    public static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .increment: state.count += 1
        case .decrement: state.count -= 1
        }
    }

    /// None: the user is the counter's only feedback.
    public static func feedbacks(_ environment: Environment) -> [Feedback<State, Event>] {
        []
    }
}
