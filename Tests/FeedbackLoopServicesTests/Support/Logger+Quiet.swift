import Logging

extension Logger {
    /// A logger for tests: only critical messages reach the console.
    static var quiet: Logger {
        var logger = Logger(label: "FeedbackLoopServicesTests")
        logger.logLevel = .critical
        return logger
    }
}
