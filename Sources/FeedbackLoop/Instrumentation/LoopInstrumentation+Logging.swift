import Logging

extension LoopInstrumentation {
    /// Instrumentation that writes what the loop does to `logger`: each transition at `debug`
    /// (the event and the states before and after), each effect's start, finish and
    /// cancellation at `trace`, and each dropped event and failed effect at `warning`.
    ///
    /// ```swift
    /// var logger = Logger(label: "pharmacies")
    /// logger.logLevel = .debug
    /// let loop = Loop(initial: .loading, reduce: reduce, feedbacks: feedbacks,
    ///                 instrumentation: .logging(logger))
    /// ```
    ///
    /// Messages are built only when `logger`'s level lets them through, so a logger at `info`
    /// costs one level comparison per transition. States are rendered with
    /// `String(describing:)`; a large state makes a large `debug` line. Combine with other
    /// hooks through ``combining(_:)``.
    ///
    /// - Parameters:
    ///   - logger: Where to log. Its metadata is kept; each message adds `event` and, for
    ///     transitions, `before` and `after`.
    ///   - label: An optional name for the loop, added to every message as `loop`.
    public static func logging(_ logger: Logger, label: String? = nil) -> LoopInstrumentation {
        var logger = logger
        if let label { logger[metadataKey: "loop"] = "\(label)" }
        return LoopInstrumentation(
            onTransition: { [logger] before, event, after in
                guard logger.logLevel <= .debug else { return }
                logger.debug(
                    "transition",
                    metadata: [
                        "event": "\(event)",
                        "before": "\(before)",
                        "after": "\(after)",
                    ])
            },
            onEffect: { [logger] lifecycle in
                switch lifecycle.kind {
                case .failed(let error):
                    logger.warning(
                        "effect failed",
                        metadata: [
                            "effect": "\(lifecycle.effect)",
                            "feedback": "\(lifecycle.feedback)",
                            "error": "\(error)",
                        ])
                case .started, .finished, .cancelled:
                    guard logger.logLevel <= .trace else { return }
                    logger.trace(
                        "effect \(lifecycle.kind)",
                        metadata: ["effect": "\(lifecycle.effect)", "feedback": "\(lifecycle.feedback)"])
                }
            },
            onDrop: { [logger] event, reason in
                logger.warning(
                    "event dropped",
                    metadata: ["event": "\(event)", "reason": "\(reason.rawValue)"])
            })
    }
}
