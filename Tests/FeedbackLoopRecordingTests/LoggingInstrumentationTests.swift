import FeedbackLoop
import Logging
import Synchronization
import Testing

/// The ready swift-log instrumentation: transitions at debug, drops and effect errors at warning.
@Suite(.timeLimit(.minutes(5))) struct LoggingInstrumentationTests {
    @Test(arguments: Backend.allCases)
    func transitionsDropsAndEffectErrorsAreLoggedAtTheirLevels(backend: Backend) async {
        let capture = LogCapture()
        var logger = Logger(label: "test") { _ in CapturingLogHandler(capture: capture) }
        logger.logLevel = .debug
        let loop = Loop(
            initial: Basket.State.loading,
            reduce: Basket.reduce,
            feedbacks: [
                .skippingRepeated({ $0 == .loading ? true : nil }) { _ in .run { _ in throw Basket.Offline() } }
            ],
            backend: backend,
            configuration: LoopConfiguration(onEffectError: { _ in }),
            instrumentation: .logging(logger, label: "basket"))
        await loop.waitUntilIdle()
        loop.send(.failed("offline"))
        await loop.waitUntilIdle()
        await loop.stop()
        loop.send(.ui(.retry))

        let entries = capture.entries
        let transitions = entries.filter { $0.message == "transition" }
        #expect(transitions.count == 1)
        #expect(transitions.first?.level == .debug)
        #expect(transitions.first?.metadata["event"] == #"failed("offline")"#)
        #expect(transitions.first?.metadata["before"] == "loading")
        #expect(transitions.first?.metadata["after"] == #"loadingFailed("offline")"#)
        #expect(transitions.first?.metadata["loop"] == "basket")

        let failures = entries.filter { $0.message == "effect failed" }
        #expect(failures.map(\.level) == [.warning])
        #expect(failures.first?.metadata["error"] == "offline")

        let drops = entries.filter { $0.message == "event dropped" }
        #expect(drops.map(\.level) == [.warning])
        #expect(drops.first?.metadata["reason"] == "afterStop")

        // Effect lifecycle is below debug: not logged at this level.
        #expect(!entries.contains { $0.message.hasPrefix("effect started") })
    }

    @Test(arguments: Backend.allCases)
    func atInfoLevelTransitionsCostNoMessage(backend: Backend) async {
        let capture = LogCapture()
        var logger = Logger(label: "test") { _ in CapturingLogHandler(capture: capture) }
        logger.logLevel = .info
        let loop = Loop(
            initial: Basket.State.loading, reduce: Basket.reduce, backend: backend,
            instrumentation: .logging(logger))
        _ = try? await loop.sendAndWait(.loaded([]))
        await loop.stop()
        #expect(capture.entries.isEmpty)
    }
}

/// Where a ``CapturingLogHandler`` keeps every entry, for assertions.
final class LogCapture: Sendable {
    struct Entry: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    fileprivate let storage = Mutex<[Entry]>([])

    var entries: [Entry] { storage.withLock { $0 } }
}

/// A log handler with value semantics (level and metadata per logger, as swift-log requires)
/// that appends to a shared ``LogCapture``.
struct CapturingLogHandler: LogHandler {
    let capture: LogCapture
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let entry = LogCapture.Entry(level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" })
        capture.storage.withLock { $0.append(entry) }
    }
}
