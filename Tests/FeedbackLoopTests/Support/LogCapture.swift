import Logging

/// A swift-log handler that keeps every message, for asserting on what the loop logged.
struct CapturingLogHandler: LogHandler {
    let entries: Locked<[(level: Logger.Level, message: String)]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        entries.append((event.level, event.message.description))
    }

    /// A logger that keeps its messages in `entries`.
    static func logger(into entries: Locked<[(level: Logger.Level, message: String)]>) -> Logger {
        Logger(label: "test") { _ in CapturingLogHandler(entries: entries) }
    }
}
