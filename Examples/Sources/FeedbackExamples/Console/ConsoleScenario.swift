import FeedbackLoop

/// A feature set up to be played from a terminal or a script: its environment with short,
/// real-time latencies, the actions a line of input can name, a default script, and what to print
/// besides the state.
///
/// Each example offers one (`Pharmacies.consoleScenario()` and so on); ``ConsoleRunner`` plays it.
public struct ConsoleScenario<Feature: ExampleFeature>: Sendable {
    /// One action a line can name, for the help text.
    public struct Action: Sendable, Hashable {
        public var syntax: String
        public var meaning: String

        public init(_ syntax: String, _ meaning: String) {
            self.syntax = syntax
            self.meaning = meaning
        }
    }

    /// When the runner takes the next line: after the effects a line started have played out.
    public enum Settling: Sendable {
        /// When the loop is idle. For features whose effects all end by themselves.
        case untilIdle
        /// When no transition happened for the duration and `busy` is false. For features with a
        /// never-ending event source, which never become idle.
        case untilQuiet(Duration, busy: @Sendable (Feature.State) -> Bool)
        /// At once: the feature runs on its own timers and `wait` lines let time pass.
        case immediately
    }

    /// The subcommand name, such as `pharmacies`.
    public var name: String
    /// One line saying what the feature shows.
    public var summary: String
    public var environment: Feature.Environment
    /// The feature's own actions; `wait`, `help` and `quit` are always available.
    public var actions: [Action]
    /// The lines played when no input is given.
    public var script: [String]
    public var settling: Settling
    /// Turns the words of one action into a step; throws for an unknown action or a bad argument.
    public var parse: @Sendable (_ words: [String]) throws(ConsoleInputError) -> ConsoleStep<Feature.Event>
    /// Lines to print after a new state besides the state itself (routes, screens), given the
    /// state before (`nil` for the first state) and after.
    public var report: @Sendable (_ before: Feature.State?, _ after: Feature.State) -> [String]

    public init(
        name: String,
        summary: String,
        environment: Feature.Environment,
        actions: [Action],
        script: [String],
        settling: Settling,
        parse: @escaping @Sendable (_ words: [String]) throws(ConsoleInputError) -> ConsoleStep<Feature.Event>,
        report: @escaping @Sendable (_ before: Feature.State?, _ after: Feature.State) -> [String] = { _, _ in [] }
    ) {
        self.name = name
        self.summary = summary
        self.environment = environment
        self.actions = actions
        self.script = script
        self.settling = settling
        self.parse = parse
        self.report = report
    }

    /// The actions every scenario understands, handled by the runner.
    public static var commonActions: [Action] {
        [
            Action("wait <ms>", "let time pass (timers keep running)"),
            Action("help", "list the actions"),
            Action("quit", "stop here"),
        ]
    }

    /// The help text: the summary and every action.
    public var help: String {
        let all = actions + Self.commonActions
        let width = (all.map(\.syntax.count).max() ?? 0) + 2
        var lines = [
            "\(name): \(summary)",
            "Actions, one per line; '#' starts a comment.",
            "Actions on one line separated by ';' run without waiting for each other's effects.",
        ]
        for action in all {
            lines.append("  " + action.syntax + String(repeating: " ", count: width - action.syntax.count) + action.meaning)
        }
        return lines.joined(separator: "\n")
    }
}

/// What one action of a console line does.
public enum ConsoleStep<Event: Sendable>: Sendable {
    /// Send the event into the loop.
    case send(Event)
    /// Set up the environment — inject a failure — described for the transcript. Given before
    /// any other action, it runs before the loop starts, so it can affect the first effects.
    case configure(String, @Sendable () -> Void)
    /// Act on an event source of the running loop — scroll the list — described for the
    /// transcript. The source must answer with at least one event: the runner waits for it
    /// before settling.
    case trigger(String, @Sendable () -> Void)
}

/// A line of console input that names no known action or has a bad argument.
public struct ConsoleInputError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    /// An action the scenario does not know.
    public static func unknownAction(_ words: [String]) -> ConsoleInputError {
        ConsoleInputError("unknown action '\(words.joined(separator: " "))'")
    }

    /// The single positive number argument of `words` (`delete 2`), 1-based as the screen shows.
    public static func number(in words: [String]) throws(ConsoleInputError) -> Int {
        guard words.count == 2, let number = Int(words[1]), number > 0 else {
            throw ConsoleInputError("'\(words[0])' needs one number from 1, as in '\(words[0]) 1'")
        }
        return number
    }

    /// The rest of the line after the action word, as one text (`username ada`).
    public static func text(in words: [String]) throws(ConsoleInputError) -> String {
        guard words.count >= 2 else {
            throw ConsoleInputError("'\(words[0])' needs a text, as in '\(words[0]) ada'")
        }
        return words.dropFirst().joined(separator: " ")
    }

    /// Throws unless `words` is the action word alone.
    public static func noArguments(_ words: [String]) throws(ConsoleInputError) {
        guard words.count == 1 else {
            throw ConsoleInputError("'\(words[0])' takes no argument")
        }
    }

    public var description: String { message }
}
