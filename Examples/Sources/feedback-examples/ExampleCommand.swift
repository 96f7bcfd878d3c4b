import ArgumentParser
import FeedbackExamples
import FeedbackLoop

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The options every feature's subcommand takes.
struct PlayOptions: ParsableArguments {
    @Option(help: "The engine that runs the loop: callback or actor.")
    var backend: Backend = .callback

    @Flag(help: "Play the feature's default script, ignoring standard input.")
    var script = false
}

// Retroactive: FeedbackLoop does not depend on swift-argument-parser, so only a command line adds this.
extension Backend: @retroactive ExpressibleByArgument {}

/// A subcommand that plays one feature's ``ConsoleScenario``.
protocol ExampleCommand: AsyncParsableCommand {
    associatedtype Feature: ExampleFeature
    var options: PlayOptions { get }
    func scenario() -> ConsoleScenario<Feature>
}

extension ExampleCommand {
    /// The subcommand's name, abstract and action list, taken from its scenario.
    static func command(_ scenario: ConsoleScenario<Feature>) -> CommandConfiguration {
        CommandConfiguration(
            commandName: scenario.name,
            abstract: "Play \(scenario.summary).",
            discussion: scenario.help + "\n\nDefault script:\n" + scenario.script.map { "  " + $0 }.joined(separator: "\n"))
    }

    func run() async throws {
        let scenario = scenario()
        let interactive = !options.script && isatty(0) == 1
        let lines: AsyncStream<String>
        if options.script {
            lines = Self.stream(scenario.script)
        } else if interactive {
            print(scenario.help)
            lines = StandardInput.lines()
        } else {
            lines = await StandardInput.linesOrElse(scenario.script) {
                print("[no input: playing the default script; see --help for the actions]")
            }
        }
        let runner = ConsoleRunner(scenario: scenario, backend: options.backend) { print($0) }
        let summary = await runner.run(lines)
        if summary.rejectedActions > 0 && !interactive {
            print("[\(summary.rejectedActions) action(s) were rejected]")
            throw ExitCode(65)
        }
    }

    static func stream(_ lines: [String]) -> AsyncStream<String> {
        AsyncStream { continuation in
            for line in lines { continuation.yield(line) }
            continuation.finish()
        }
    }
}
