#if Services
/// Why a ``LoopRegistry`` could not give a loop.
///
/// A struct with a ``Code`` rather than an enum, so that new reasons do not break callers'
/// `switch` statements.
public struct LoopRegistryError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The reason.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// ``LoopRegistry/Configuration/maximumLoops`` loops are live; no loop was created. The
        /// refusal is counted in ``LoopRegistry/Statistics/refused``.
        public static let tooManyLoops = Code("tooManyLoops")
        /// The registry is shutting down (or has stopped) and creates no loops.
        public static let shuttingDown = Code("shuttingDown")
        /// No loop is live for the id, and the call asked not to create one.
        public static let noSuchLoop = Code("noSuchLoop")
        /// ``LoopRegistry/run()`` was called a second time; a registry runs once.
        public static let alreadyRun = Code("alreadyRun")

        public var description: String { name }
    }

    /// The reason.
    public let code: Code

    private init(_ code: Code) { self.code = code }

    /// See ``Code/tooManyLoops``.
    public static let tooManyLoops = LoopRegistryError(.tooManyLoops)
    /// See ``Code/shuttingDown``.
    public static let shuttingDown = LoopRegistryError(.shuttingDown)
    /// See ``Code/noSuchLoop``.
    public static let noSuchLoop = LoopRegistryError(.noSuchLoop)
    /// See ``Code/alreadyRun``.
    public static let alreadyRun = LoopRegistryError(.alreadyRun)

    public var description: String {
        switch code {
        case .tooManyLoops: "the registry holds its maximum number of live loops; no loop was created"
        case .shuttingDown: "the registry is shutting down and creates no loops"
        case .noSuchLoop: "no loop is live for that id"
        default: "the registry's run() was already called; a registry runs once"
        }
    }
}
#endif
