import FeedbackLoop

/// The traffic light of the talk "Managing state in reactive applications": red, yellow, green,
/// each lit for its own time, driven by one timer feedback per light.
///
/// Time comes from the injected clock, so tests drive the light with a `TestClock` in zero wall
/// time. A manual ``Event/next`` (a pedestrian button, say) moves on at once and restarts the
/// timer of the new light: the old light's timer is cancelled when its state goes away.
public enum TrafficLight: ExampleFeature {
    /// What the feedbacks need.
    public struct Environment: Sendable {
        public var clock: any Clock<Duration>
        public var timing: Timing

        public init(clock: any Clock<Duration> = ContinuousClock(), timing: Timing = Timing()) {
            self.clock = clock
            self.timing = timing
        }
    }

    /// How long each light stays lit.
    public struct Timing: Hashable, Sendable {
        public var red: Duration
        public var yellow: Duration
        public var green: Duration

        /// The talk's timing is one second for each; these defaults are closer to a real light.
        public init(red: Duration = .seconds(3), yellow: Duration = .seconds(1), green: Duration = .seconds(3)) {
            self.red = red
            self.yellow = yellow
            self.green = green
        }

        /// How long `light` stays lit.
        public func duration(of light: State) -> Duration {
            switch light {
            case .red: red
            case .yellow: yellow
            case .green: green
            }
        }
    }

    /// The light that is lit.
    public enum State: String, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
        case red
        case yellow
        case green

        public var description: String { rawValue }
    }

    /// The talk's only event.
    public enum Event: String, Hashable, Sendable, Codable, CustomStringConvertible {
        /// Light the next light.
        case next

        public var description: String { rawValue }
    }

    public static var initialState: State { .red }

    /// The talk's reducer: every `next` lights the following light, red → yellow → green → red.
    public static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .next:
            switch state {
            case .red: state = .yellow
            case .yellow: state = .green
            case .green: state = .red
            }
        }
    }

    /// The talk's `whenRed()`, `whenYellow()` and `whenGreen()`: while a light is lit, wait its
    /// time, then send ``Event/next``.
    public static func feedbacks(_ environment: Environment) -> [Feedback<State, Event>] {
        State.allCases.map { light in when(light, environment) }
    }

    private static func when(_ light: State, _ environment: Environment) -> Feedback<State, Event> {
        let clock = environment.clock
        let duration = environment.timing.duration(of: light)
        return .whenBecomesTrue({ $0 == light }) { _ in
            .run { send in
                try await clock.sleep(for: duration)
                send(.next)
            }
        }
    }
}
