extension Counter {
    /// The counter for the command line.
    public static func consoleScenario() -> ConsoleScenario<Counter> {
        ConsoleScenario(
            name: "counter",
            summary: "the counter of 'RxFeedback – the simplest architecture'",
            environment: Environment(),
            actions: [
                .init("+ | increment", "tap plus"),
                .init("- | decrement", "tap minus"),
            ],
            script: ["+", "+", "+", "-"],
            settling: .untilIdle,
            parse: { words throws(ConsoleInputError) in
                switch words[0] {
                case "+", "increment":
                    try ConsoleInputError.noArguments(words)
                    return .send(.increment)
                case "-", "decrement":
                    try ConsoleInputError.noArguments(words)
                    return .send(.decrement)
                default:
                    throw .unknownAction(words)
                }
            })
    }
}
