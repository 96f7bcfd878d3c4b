#if Services
/// Why a ``LoopService`` refused a call.
///
/// A struct with a ``Code`` rather than an enum, so that new reasons do not break callers'
/// `switch` statements.
public struct LoopServiceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The reason.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The service is shutting down (or has stopped) and takes no new events. The event was
        /// not sent to the loop.
        public static let notAcceptingEvents = Code("notAcceptingEvents")
        /// ``LoopService/run()`` was called a second time; a service runs its loop once.
        public static let alreadyRun = Code("alreadyRun")

        public var description: String { name }
    }

    /// The reason.
    public let code: Code

    private init(_ code: Code) { self.code = code }

    /// See ``Code/notAcceptingEvents``.
    public static let notAcceptingEvents = LoopServiceError(.notAcceptingEvents)
    /// See ``Code/alreadyRun``.
    public static let alreadyRun = LoopServiceError(.alreadyRun)

    public var description: String {
        switch code {
        case .notAcceptingEvents: "the service is shutting down and takes no new events; the event was not sent"
        default: "the service's run() was already called; a LoopService runs its loop once"
        }
    }
}
#endif
