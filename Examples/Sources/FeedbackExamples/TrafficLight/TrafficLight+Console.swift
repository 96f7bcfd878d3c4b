extension TrafficLight {
    /// The traffic light for the command line, on real time with short lights.
    public static func consoleScenario(
        timing: Timing = Timing(red: .milliseconds(300), yellow: .milliseconds(100), green: .milliseconds(300))
    ) -> ConsoleScenario<TrafficLight> {
        ConsoleScenario(
            name: "traffic-light",
            summary: "the traffic light of 'Managing state in reactive applications', on timers",
            environment: Environment(clock: ContinuousClock(), timing: timing),
            actions: [
                .init("next", "switch to the next light now (its timer starts afresh)")
            ],
            script: [
                "wait 850       # red 300 ms, yellow 100 ms, green 300 ms, red again",
                "next           # skip ahead: yellow at once",
                "wait 250",
            ],
            settling: .immediately,
            parse: { words throws(ConsoleInputError) in
                guard words[0] == "next" else { throw .unknownAction(words) }
                try ConsoleInputError.noArguments(words)
                return .send(.next)
            },
            report: { _, after in
                switch after {
                case .red: ["(●) ( ) ( )"]
                case .yellow: ["( ) (●) ( )"]
                case .green: ["( ) ( ) (●)"]
                }
            })
    }
}
