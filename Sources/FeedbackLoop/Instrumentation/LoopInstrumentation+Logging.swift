import Logging

extension LoopInstrumentation {
    /// Instrumentation that writes a loop's detail to `logger`: each transition at `debug` (the
    /// event and the states before and after), each dropped event at `debug`, and each effect's
    /// start, finish, failure and cancellation at `trace`, named by its feedback's label.
    ///
    /// You rarely need it: a loop already logs this detail through
    /// ``LoopConfiguration/logger`` when that logger's level is `debug` or lower, and logs each
    /// effect failure there once, at `error`. Use it to send one loop's detail to a second
    /// logger:
    ///
    /// ```swift
    /// var detail = Logger(label: "pharmacies.detail")
    /// detail.logLevel = .trace
    /// let loop = Loop(initial: .loading, reduce: reduce, feedbacks: feedbacks,
    ///                 instrumentation: .logging(detail))
    /// ```
    ///
    /// Messages are built only when `logger`'s level lets them through, so a logger at `info`
    /// costs one level comparison per transition. States are rendered with
    /// `String(describing:)`; a large state makes a large `debug` line. Nothing here logs above
    /// `debug`: warnings and errors come from the loop itself, once each.
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
                guard logger.logLevel <= .trace else { return }
                var metadata: Logger.Metadata = [
                    "effect": "\(lifecycle.effect)", "feedback": "\(lifecycle.feedbackName)",
                ]
                let what: String
                switch lifecycle.kind {
                case .started: what = "started"
                case .finished: what = "finished"
                case .cancelled: what = "cancelled"
                case .failed(let error):
                    what = "failed"
                    metadata["error"] = "\(error)"
                }
                logger.trace("effect \(what)", metadata: metadata)
            },
            onDrop: { [logger] event, reason in
                guard logger.logLevel <= .debug else { return }
                logger.debug(
                    "event dropped",
                    metadata: ["event": "\(event)", "reason": "\(reason.rawValue)"])
            })
    }

    /// What a loop adds for a ``LoopConfiguration/logger`` at `debug` or lower.
    static func verboseLogging(_ logger: Logger, label: String) -> LoopInstrumentation {
        logging(logger, label: label)
    }
}
