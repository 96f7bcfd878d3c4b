import FeedbackExamples
import FeedbackLoop
import FeedbackLoopServices
import Logging
import ServiceLifecycle
import Synchronization

/// The pharmacies screens of every client, one ``Loop`` per session, run as one `Service`.
///
/// Each session is a ``LoopService``; this service runs them all in one task group, so that a
/// graceful shutdown reaches each of them: every session stops taking events, lets its in-flight
/// effects (a save, a delete) finish within the grace period, and reports its final state to
/// ``Configuration/onSessionEnded``. Put it in a `ServiceGroup` *before* the HTTP server (a
/// Hummingbird `Application`'s own `services` are): the group shuts services down in reverse
/// order, so the server finishes the requests it accepted before the sessions drain.
///
/// ```swift
/// let sessions = PharmacySessions(configuration: .init(makeService: { _ in FakePharmaciesService() }))
/// let (session, _) = try sessions.open("alice")
/// let state = try await session.sendAndWait(.ui(.addPharmacy))
/// ```
public final class PharmacySessions: Service, Sendable {
    /// One client's screen: a pharmacies loop, run as a ``LoopService``.
    public typealias Session = LoopService<Pharmacies.State, Pharmacies.Event>
    /// How a session ended, handed to ``Configuration/onSessionEnded``.
    public typealias Report = LoopShutdownReport<Pharmacies.State>

    /// How sessions are made and how they end.
    public struct Configuration: Sendable {
        /// The backend every session's loop runs on.
        public var backend: Backend
        /// How long a graceful shutdown waits for each session's effects.
        public var gracePeriod: Duration
        /// How many sessions may be open at once; opening one more fails with
        /// ``PharmacySessionsError/tooManySessions``.
        public var maximumSessions: Int
        /// The back end each new session talks to.
        public var makeService: @Sendable (_ session: String) -> any PharmaciesService
        /// Called once per session when its loop has stopped, with its final state.
        public var onSessionEnded: @Sendable (_ session: String, _ report: Report) async -> Void
        /// Metrics shared by every session's loop, if any.
        public var metrics: LoopMetrics?
        /// Where sessions log; each session adds its id as `session` metadata.
        public var logger: Logger

        /// A configuration with these values; only `makeService` has no default.
        public init(
            backend: Backend = .callback,
            gracePeriod: Duration = .seconds(10),
            maximumSessions: Int = 10_000,
            makeService: @escaping @Sendable (_ session: String) -> any PharmaciesService,
            onSessionEnded: @escaping @Sendable (_ session: String, _ report: Report) async -> Void = { _, _ in },
            metrics: LoopMetrics? = nil,
            logger: Logger = Logger(label: "PharmacySessions")
        ) {
            self.backend = backend
            self.gracePeriod = gracePeriod
            self.maximumSessions = maximumSessions
            self.makeService = makeService
            self.onSessionEnded = onSessionEnded
            self.metrics = metrics
            self.logger = logger
        }
    }

    private struct State {
        var sessions: [String: Session] = [:]
        var isClosed = false
        var drainingWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// How sessions are made and end.
    public let configuration: Configuration
    private let state = Mutex(State())
    private let newSessions: AsyncStream<(String, Session)>
    private let newSessionsContinuation: AsyncStream<(String, Session)>.Continuation

    /// A registry with no sessions yet. Sessions open with ``open(_:)`` and run once ``run()``
    /// runs (a session opened earlier waits in line and already takes events).
    public init(configuration: Configuration) {
        self.configuration = configuration
        (newSessions, newSessionsContinuation) = AsyncStream.makeStream(of: (String, Session).self)
    }

    /// The open session with this id, if any.
    public func session(_ id: String) -> Session? {
        state.withLock { $0.sessions[id] }
    }

    /// The number of open sessions.
    public var count: Int {
        state.withLock { $0.sessions.count }
    }

    /// Opens the session with this id, or returns it if it is already open. A new session starts
    /// in ``Pharmacies/initialState`` and loads the saved pharmacies at once.
    ///
    /// - Throws: ``PharmacySessionsError`` when the id is malformed, too many sessions are open,
    ///   or shutdown has begun.
    public func open(_ id: String) throws(PharmacySessionsError) -> (session: Session, created: Bool) {
        guard Self.isValid(id) else { throw .invalidSessionID }
        if let existing = session(id) { return (existing, false) }

        var logger = configuration.logger
        logger[metadataKey: "session"] = "\(id)"
        // Made outside the lock: creating a loop starts its feedbacks. If another request opened
        // the same id meanwhile, this one is dropped, which stops its loop.
        let loop = Pharmacies.makeLoop(
            environment: .init(service: configuration.makeService(id)),
            backend: configuration.backend,
            configuration: LoopConfiguration(label: "pharmacies", logger: logger),
            instrumentation: configuration.metrics?.instrumentation())
        let candidate = Session(
            loop: loop, gracePeriod: configuration.gracePeriod, logger: logger,
            metrics: configuration.metrics
        ) { [weak self] report in
            await self?.ended(id, report: report)
        }

        return try state.withLock { state throws(PharmacySessionsError) -> (Session, Bool) in
            if let existing = state.sessions[id] { return (existing, false) }
            guard !state.isClosed else { throw .shuttingDown }
            guard state.sessions.count < configuration.maximumSessions else { throw .tooManySessions }
            state.sessions[id] = candidate
            // Yielded inside the lock, so that every session in the registry reaches run()'s task
            // group before closeRegistry() finishes the stream. The stream only buffers here.
            newSessionsContinuation.yield((id, candidate))
            return (candidate, true)
        }
    }

    /// Ends a session now: its loop stops (cancelling any effect), and it leaves the registry.
    ///
    /// - Returns: The session's final state, or `nil` if no such session was open.
    public func close(_ id: String) async -> Pharmacies.State? {
        guard let session = state.withLock({ $0.sessions.removeValue(forKey: id) }) else { return nil }
        await session.loop.stop()
        return session.loop.state
    }

    /// Returns once shutdown has begun for the sessions: no session opens any more and each is
    /// draining. For readiness checks and tests.
    public func waitUntilDraining() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let isClosed = state.withLock { state -> Bool in
                if !state.isClosed { state.drainingWaiters.append(waiter) }
                return state.isClosed
            }
            if isClosed { waiter.resume() }
        }
    }

    /// Runs every session until graceful shutdown or cancellation, then waits for each to drain
    /// (see ``LoopService``) and returns.
    public func run() async throws {
        await withTaskCancellationOrGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                // Each child inherits this task's graceful-shutdown trigger, so every session
                // starts draining the moment this service is told to shut down.
                for await (id, session) in newSessions {
                    group.addTask { [logger = configuration.logger] in
                        do {
                            try await session.run()
                        } catch {
                            logger.error("session \(id) could not run: \(error)")
                        }
                    }
                }
            }
        } onCancelOrGracefulShutdown: { [self] in
            closeRegistry()
        }
        configuration.logger.info("all pharmacy sessions ended")
    }

    private func closeRegistry() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.isClosed else { return [] }
            state.isClosed = true
            // Inside the lock for the same reason as the yield in open(_:).
            newSessionsContinuation.finish()
            defer { state.drainingWaiters = [] }
            return state.drainingWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func ended(_ id: String, report: Report) async {
        state.withLock { state in
            _ = state.sessions.removeValue(forKey: id)
        }
        configuration.logger.debug(
            "session ended", metadata: ["session": "\(id)", "ending": "\(report.ending)", "state": "\(report.finalState)"])
        await configuration.onSessionEnded(id, report)
    }

    /// 1 to 64 letters, digits, `-` or `_`.
    static func isValid(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }
}

/// Why ``PharmacySessions`` could not open a session.
public enum PharmacySessionsError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The id is not 1 to 64 letters, digits, `-` or `_`.
    case invalidSessionID
    /// ``PharmacySessions/Configuration/maximumSessions`` sessions are already open.
    case tooManySessions
    /// The service is shutting down.
    case shuttingDown

    public var description: String {
        switch self {
        case .invalidSessionID: "a session id is 1 to 64 letters, digits, '-' or '_'"
        case .tooManySessions: "too many sessions are open"
        case .shuttingDown: "the service is shutting down"
        }
    }
}
