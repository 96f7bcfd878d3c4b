import Logging

/// A log that keeps every record at or above its level, for tests that check what the server
/// logs.
final class CapturedLog: Sendable {
    struct Record: Sendable, CustomStringConvertible {
        var level: Logger.Level
        var message: String
        var description: String { "[\(level)] \(message)" }
    }

    private let records = Locked<[Record]>([])

    /// A logger whose records this log keeps, from `level` up.
    func logger(level: Logger.Level) -> Logger {
        var logger = Logger(label: "captured") { _ in Handler(log: self) }
        logger.logLevel = level
        return logger
    }

    var all: [Record] { records.withLock { $0 } }

    fileprivate func append(_ record: Record) {
        records.withLock { $0.append(record) }
    }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            log.append(Record(level: event.level, message: "\(event.message)"))
        }
    }
}
