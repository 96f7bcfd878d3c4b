import FeedbackLoop

/// Play catch, from "RxFeedback – the simplest architecture": a human and a machine throw a ball
/// to each other. The human throws by sending an event; the machine is an automatic feedback
/// that, while it holds the ball, waits its thinking time and throws it back.
///
/// The waiting uses the injected clock, so tests play in zero wall time with a `TestClock`.
public enum PlayCatch: ExampleFeature {
    /// What the machine's feedback needs.
    public struct Environment: Sendable {
        public var clock: any Clock<Duration>
        /// How long the machine holds the ball before throwing it back (the post's one second).
        public var machineDelay: Duration

        public init(clock: any Clock<Duration> = ContinuousClock(), machineDelay: Duration = .seconds(1)) {
            self.clock = clock
            self.machineDelay = machineDelay
        }
    }

    /// Who has the ball.
    public enum State: String, Hashable, Sendable, Codable, CustomStringConvertible {
        case humanHasIt
        case machineHasIt

        /// The post's query: the machine is pitching while it has the ball.
        public var machinePitching: Bool { self == .machineHasIt }

        public var description: String {
            switch self {
            case .humanHasIt: "the human has the ball"
            case .machineHasIt: "the machine has the ball"
            }
        }
    }

    /// The two throws.
    public enum Event: String, Hashable, Sendable, Codable, CustomStringConvertible {
        case throwToMachine
        case throwToHuman

        public var description: String {
            switch self {
            case .throwToMachine: "throw to the machine"
            case .throwToHuman: "throw to the human"
            }
        }
    }

    public static var initialState: State { .humanHasIt }

    /// Only whoever holds the ball can throw it: a throw by the other player is ignored.
    public static func reduce(_ state: inout State, _ event: Event) {
        switch (state, event) {
        case (.humanHasIt, .throwToMachine): state = .machineHasIt
        case (.machineHasIt, .throwToHuman): state = .humanHasIt
        default: break
        }
    }

    /// The machine's feedback: while it pitches, wait, then throw to the human.
    public static func feedbacks(_ environment: Environment) -> [Feedback<State, Event>] {
        let clock = environment.clock
        let delay = environment.machineDelay
        return [
            .whenBecomesTrue(\.machinePitching) { _ in
                .run { send in
                    try await clock.sleep(for: delay)
                    send(.throwToHuman)
                }
            }
        ]
    }
}
