extension PlayCatch {
    /// Play catch for the command line: the machine throws back after `machineDelay`, real time.
    public static func consoleScenario(machineDelay: Duration = .milliseconds(150)) -> ConsoleScenario<PlayCatch> {
        ConsoleScenario(
            name: "play-catch",
            summary: "play catch with the machine, from 'RxFeedback – the simplest architecture'",
            environment: Environment(clock: ContinuousClock(), machineDelay: machineDelay),
            actions: [
                .init("throw", "throw the ball to the machine (if you have it)")
            ],
            script: [
                "throw          # the machine throws it back by itself",
                "throw; throw   # the second throw comes while the machine has the ball: ignored",
            ],
            settling: .untilIdle,
            parse: { words throws(ConsoleInputError) in
                guard words[0] == "throw" else { throw .unknownAction(words) }
                try ConsoleInputError.noArguments(words)
                return .send(.throwToMachine)
            })
    }
}
