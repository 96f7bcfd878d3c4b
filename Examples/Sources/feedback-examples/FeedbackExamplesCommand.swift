import ArgumentParser
import FeedbackExamples
import FeedbackLoop

/// `feedback-examples <feature>`: plays one of the articles' features headless and prints a
/// transcript of every action, event, state, route and screen.
@main
struct FeedbackExamplesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feedback-examples",
        abstract: "Play the features of the FeedbackLoop articles headless, as a readable transcript.",
        discussion: """
            Actions come from standard input, one per line. When standard input is not a terminal \
            and holds no lines (as with '< /dev/null'), each feature plays a short default script. \
            Run 'feedback-examples help <feature>' for a feature's actions. A run whose input had \
            unknown or malformed actions ends with exit code 65 after playing the rest.
            """,
        subcommands: [
            PharmaciesCommand.self, PagingCommand.self, TrafficLightCommand.self, LoginCommand.self,
            CounterCommand.self, PlayCatchCommand.self,
        ])
}

struct PharmaciesCommand: ExampleCommand {
    static let configuration = command(Pharmacies.consoleScenario())
    @OptionGroup var options: PlayOptions
    func scenario() -> ConsoleScenario<Pharmacies> { Pharmacies.consoleScenario() }
}

struct PagingCommand: ExampleCommand {
    static let configuration = command(MoviePaging.consoleScenario())
    @OptionGroup var options: PlayOptions
    func scenario() -> ConsoleScenario<MoviePaging> { MoviePaging.consoleScenario() }
}

struct TrafficLightCommand: ExampleCommand {
    static let configuration = command(TrafficLight.consoleScenario())
    @OptionGroup var options: PlayOptions
    func scenario() -> ConsoleScenario<TrafficLight> { TrafficLight.consoleScenario() }
}

struct LoginCommand: ExampleCommand {
    static let configuration = command(Login.consoleScenario())
    @OptionGroup var options: PlayOptions
    func scenario() -> ConsoleScenario<Login> { Login.consoleScenario() }
}

struct CounterCommand: ExampleCommand {
    static let configuration = command(Counter.consoleScenario())
    @OptionGroup var options: PlayOptions
    func scenario() -> ConsoleScenario<Counter> { Counter.consoleScenario() }
}

struct PlayCatchCommand: ExampleCommand {
    static let configuration = command(PlayCatch.consoleScenario())
    @OptionGroup var options: PlayOptions
    func scenario() -> ConsoleScenario<PlayCatch> { PlayCatch.consoleScenario() }
}
