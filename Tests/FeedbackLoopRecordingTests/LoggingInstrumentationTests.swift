import FeedbackLoop
import Logging
import Synchronization
import Testing

/// Logging: the loop logs through its configuration's logger (failures once, at error; detail at
/// debug and trace when the level lets it through); `.logging` sends the same detail elsewhere.
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

        // A failure is the configuration's to report (here its hook took it): nothing above debug.
        #expect(!entries.contains { $0.level > .debug })

        let drops = entries.filter { $0.message == "event dropped" }
        #expect(drops.map(\.level) == [.debug])
        #expect(drops.first?.metadata["reason"] == "afterStop")

        // Effect lifecycle is below debug: not logged at this level.
        #expect(!entries.contains { $0.message.hasPrefix("effect ") })
    }

    @Test(arguments: Backend.allCases)
    func theConfigurationsLoggerIsTheOnePlace(backend: Backend) async {
        let capture = LogCapture()
        var logger = Logger(label: "test") { _ in CapturingLogHandler(capture: capture) }
        logger.logLevel = .trace
        let loop = Loop(
            initial: Basket.State.loading,
            reduce: Basket.reduce,
            feedbacks: [
                .skippingRepeated({ $0 == .loading ? true : nil }) { _ in .run { _ in throw Basket.Offline() } }
                    .labeled("basket loader")
            ],
            backend: backend,
            configuration: LoopConfiguration(label: "basket", logger: logger))
        await loop.waitUntilIdle()
        loop.send(.failed("offline"))
        await loop.waitUntilIdle()
        await loop.stop()

        let entries = capture.entries
        // The failure: one line at error, none at warning, named by the feedback's label.
        #expect(entries.filter { $0.level >= .warning }.map(\.level) == [.error])
        let failure = entries.first { $0.level == .error }
        #expect(failure?.message == "effect failed: offline")
        #expect(failure?.metadata["feedback"] == "basket loader")
        #expect(failure?.metadata["loop"] == "basket")
        // The detail, from the same logger.
        #expect(entries.filter { $0.message == "transition" }.map(\.level) == [.debug])
        let lifecycle = entries.filter { $0.message.hasPrefix("effect ") && $0.level == .trace }
        #expect(lifecycle.map(\.message) == ["effect started", "effect failed"])
        #expect(lifecycle.allSatisfy { $0.metadata["feedback"] == "basket loader" })
    }

    @Test(arguments: Backend.allCases)
    func anInstrumentInTheConfigurationSeesTheLoopWithLabels(backend: Backend) async {
        let seen = EffectNames()
        let loop = Loop(
            initial: Basket.State.loading,
            reduce: Basket.reduce,
            feedbacks: [
                .skippingRepeated({ $0 == .loading ? true : nil }) { _ in .run { _ in } }.labeled("loader"),
                .custom { _, _ in .none },
                .custom { _, event in event == nil ? .send(.loaded([])) : .none },
            ],
            backend: backend,
            configuration: LoopConfiguration(instruments: [seen]))
        await loop.waitUntilIdle()
        await loop.stop()
        #expect(seen.names.sorted() == ["feedback 2 started", "loader started"])
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

/// An instrument that notes which feedbacks started effects.
final class EffectNames: LoopInstrument {
    private let storage = Lock<[String]>([])

    var names: [String] { storage.withLock { $0 } }

    func instrumentation<State: Sendable, Event: Sendable>(
        state: State.Type, event: Event.Type
    ) -> LoopInstrumentation<State, Event> {
        LoopInstrumentation(onEffect: { [self] lifecycle in
            guard lifecycle.kind == .started else { return }
            storage.withLock { $0.append("\(lifecycle.feedbackName) started") }
        })
    }
}

/// Where a ``CapturingLogHandler`` keeps every entry, for assertions.
final class LogCapture: Sendable {
    struct Entry: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    fileprivate let storage = Lock<[Entry]>([])

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
