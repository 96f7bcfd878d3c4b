/// Why an asynchronous ``Loop`` call could not do what was asked.
///
/// A struct with a ``Code`` rather than an enum, so that new reasons do not break callers'
/// `switch` statements.
public struct LoopError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The reason.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        @usableFromInline let name: String
        @usableFromInline init(_ name: String) { self.name = name }

        /// The loop had stopped, or stopped before the event was reduced.
        public static let stopped = Code("stopped")
        /// The calling task was cancelled while it waited for room in a bounded queue; the event
        /// was not queued.
        public static let cancelled = Code("cancelled")

        public var description: String { name }
    }

    /// The reason.
    public let code: Code

    @usableFromInline init(_ code: Code) { self.code = code }

    public static let stopped = LoopError(.stopped)
    public static let cancelled = LoopError(.cancelled)

    public var description: String {
        switch code {
        case .stopped: "the loop has stopped; the event was not reduced"
        default: "the task was cancelled while waiting for room in the loop's queue; the event was not queued"
        }
    }
}
