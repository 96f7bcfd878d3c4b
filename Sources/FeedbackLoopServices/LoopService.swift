#if Services
import FeedbackLoop
import Logging
import ServiceLifecycle

#if Tracing
import FeedbackLoopTracing
#endif

/// Runs a `Loop` as a swift-service-lifecycle `Service`, so that a `ServiceGroup` starts it,
/// and on graceful shutdown drains it: no new events, a grace period for the work in flight, then
/// a stop, and the final state handed to a callback.
///
/// ```swift
/// let loop = Loop(initial: Orders.State(), reduce: Orders.reduce, feedbacks: Orders.feedbacks)
/// let orders = LoopService(loop: loop, gracePeriod: .seconds(5)) { report in
///     logger.info("orders stopped: \(report.ending), \(report.finalState.pending.count) pending")
/// }
/// let group = ServiceGroup(services: [orders, httpServer], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
///
/// // In a request handler:
/// let state = try await orders.sendAndWait(.placed(order))
/// ```
///
/// ## Shutdown
/// When the `ServiceGroup` shuts down gracefully (or the task running ``run()`` is cancelled),
/// the service at once stops taking events: ``send(_:)`` returns `false` and
/// ``sendAndWait(_:)`` throws ``LoopServiceError/notAcceptingEvents``, and both count the event in
/// ``eventsRefused``. Every event accepted before that moment is still reduced. The loop keeps
/// running for up to `gracePeriod`: effects finish, and the events they send are reduced (the
/// loop's own events are never refused), until the loop is idle — nothing queued, no effect
/// running. Then, or when the grace period runs out, the loop stops, which cancels the effects
/// still running and waits for them to end. Last, `onShutdown` receives a
/// ``LoopShutdownReport`` with the final state, and ``run()`` returns.
///
/// Cancelling the task running ``run()`` skips the grace period: the loop stops at once.
///
/// ## Refused events in traces
/// When the loop's `LoopConfiguration/instruments` include `LoopTracing` (FeedbackLoopTracing,
/// package trait `Tracing`), each event the service refuses gets the span of an event that was not
/// reduced: a `reduce` span, a child of the caller's `ServiceContext` (the span of the request that
/// sent it), ended at once, with `feedback_loop.dropped` set to `refusedDuringShutdown` (the
/// `reason` ``LoopMetrics`` counts it under), `feedback_loop.event` its case name and
/// `feedback_loop.label` the loop's label. It is made in the caller's task, before ``send(_:)``
/// returns `false` or ``sendAndWait(_:)`` throws. An event the service passes on and the loop then
/// drops (over capacity, after stop) gets the loop's own `reduce` span with the loop's reason.
///
/// > Note: Send through the service, not through ``loop``, for events from outside (requests,
/// > messages): only the service's methods know about shutdown. A loop whose feedbacks keep an
/// > effect running forever (an `events` source, a timer) never becomes idle, so its shutdown
/// > always takes the whole grace period before that effect is cancelled.
///
/// ## The loop's task tree
/// The service runs the loop with `Loop.run()` in a child task of its own ``run()``. A loop on
/// `Backend.stream` made with `LoopConfiguration(hosting: .run)` therefore lives inside the
/// service: its state and every `.run` effect are tasks of the service's tree, so the task-local
/// values the service runs with (a tracing `ServiceContext`, a logger's metadata) reach every
/// effect, and the service's ``run()`` returns only after every effect has ended.
///
/// ## Threading and cost
/// ``send(_:)`` and ``sendAndWait(_:)`` may be called from any task or thread. Each adds two
/// short, uncontended lock sections to the loop's own cost; nothing else sits on the per-event
/// path (no `AsyncStream`, no per-event graceful-shutdown handler).
public final class LoopService<State: Sendable, Event: Sendable>: Service, Sendable {
    /// The loop this service runs. Read its `Loop.state`, `Loop.statistics` or
    /// `Loop.states` freely; send events through the service.
    public let loop: Loop<State, Event>

    /// How long, at most, a graceful shutdown waits for the loop to become idle before it
    /// cancels the remaining effects.
    public let gracePeriod: Duration

    private let sleep: @Sendable (Duration) async throws -> Void
    private let gate = AdmissionGate()
    private let logger: Logger
    private let metrics: LoopMetrics?
    #if Tracing
    /// The `LoopTracing` among the loop's instruments, whose tracer spans the refused events.
    private let tracing: LoopTracing?
    #endif
    private let onShutdown: @Sendable (LoopShutdownReport<State>) async -> Void

    /// Creates a service for `loop` whose grace period is measured by `clock`.
    ///
    /// - Parameters:
    ///   - loop: The loop to run. It starts when it is created; the service ties its end to the
    ///     service's life.
    ///   - gracePeriod: How long a graceful shutdown waits for effects to end; `.zero` cancels
    ///     them at once. The grace period races the wait for idleness, so with `.zero` the report
    ///     may say ``LoopShutdownReport/Ending/gracePeriodExpired`` even for an idle loop; its
    ///     ``LoopShutdownReport/statistics`` tell what was cancelled.
    ///   - clock: The clock that measures the grace period — a test clock in tests.
    ///   - logger: Logs the shutdown's start and end and the first refused event; by default
    ///     the loop's own `LoopConfiguration/logger`, so logs are wired once, in the loop's
    ///     configuration.
    ///   - metrics: Counts refused events in its `events_dropped_total` with reason
    ///     `refusedDuringShutdown`; by default the ``LoopMetrics`` among the loop's
    ///     `LoopConfiguration/instruments`, which also count the loop's own figures.
    ///   - onShutdown: Called once, after the loop stopped and before ``run()`` returns, with
    ///     the final state and counters.
    public init<C: Clock>(
        loop: Loop<State, Event>,
        gracePeriod: Duration = .seconds(10),
        clock: C,
        logger: Logger? = nil,
        metrics: LoopMetrics? = nil,
        onShutdown: @escaping @Sendable (LoopShutdownReport<State>) async -> Void = { _ in }
    ) where C.Duration == Duration {
        self.loop = loop
        self.gracePeriod = gracePeriod
        self.sleep = { try await clock.sleep(for: $0) }
        self.logger = logger ?? loop.configuration.logger
        self.metrics = metrics ?? loop.configuration.instruments.lazy.compactMap { $0 as? LoopMetrics }.first
        #if Tracing
        self.tracing = loop.configuration.instruments.lazy.compactMap { $0 as? LoopTracing }.first
        #endif
        self.onShutdown = onShutdown
    }

    /// Creates a service for `loop` whose grace period is measured in real time.
    ///
    /// See ``init(loop:gracePeriod:clock:logger:metrics:onShutdown:)``.
    public convenience init(
        loop: Loop<State, Event>,
        gracePeriod: Duration = .seconds(10),
        logger: Logger? = nil,
        metrics: LoopMetrics? = nil,
        onShutdown: @escaping @Sendable (LoopShutdownReport<State>) async -> Void = { _ in }
    ) {
        self.init(
            loop: loop, gracePeriod: gracePeriod, clock: ContinuousClock(), logger: logger, metrics: metrics,
            onShutdown: onShutdown)
    }

    /// Whether the service still takes events: `true` until shutdown begins.
    public var isAcceptingEvents: Bool {
        gate.isOpen
    }

    /// Returns once the service has stopped accepting events: graceful shutdown began, the task
    /// running ``run()`` was cancelled, or the loop stopped. Returns at once if that already
    /// happened.
    ///
    /// For readiness checks, and for tests that must know the shutdown has reached the service
    /// (a `ServiceGroup` tells its services asynchronously, and not before ``run()`` started).
    public func waitUntilShuttingDown() async {
        _ = await gate.waitForStopRequest()
    }

    /// Events ``send(_:)`` and ``sendAndWait(_:)`` refused because shutdown had begun.
    public var eventsRefused: Int {
        gate.refused
    }

    /// Sends an event into the loop, unless shutdown has begun.
    ///
    /// Behaves like `Loop.send(_:)` (which see for ordering and threading) while the service
    /// accepts events.
    ///
    /// - Returns: `true` if the event went to the loop; `false` if it was refused (counted in
    ///   ``eventsRefused``, and with a span when the loop has `LoopTracing`: see
    ///   "Refused events in traces" in ``LoopService``) because shutdown had begun.
    @discardableResult
    public func send(_ event: Event) -> Bool {
        if case .refused(let isFirst) = gate.enter() {
            refused(event, isFirst: isFirst)
            return false
        }
        defer { gate.leave() }
        loop.send(event)
        return true
    }

    /// Sends an event and returns the state right after the reducer ran on it, unless shutdown
    /// has begun.
    ///
    /// Behaves like `Loop.sendAndWait(_:)` while the service accepts events. An event accepted
    /// before shutdown began is reduced before the loop stops (a graceful shutdown waits for it,
    /// within the grace period).
    ///
    /// - Throws: ``LoopServiceError/notAcceptingEvents`` if shutdown had begun (the event is
    ///   counted in ``eventsRefused``, has a span when the loop has `LoopTracing`, and never
    ///   reaches the loop); otherwise what `Loop.sendAndWait(_:)` throws.
    @discardableResult
    public func sendAndWait(_ event: Event) async throws -> State {
        if case .refused(let isFirst) = gate.enter() {
            refused(event, isFirst: isFirst)
            throw LoopServiceError.notAcceptingEvents
        }
        defer { gate.leave() }
        return try await loop.sendAndWait(event)
    }

    /// Begins this service's graceful shutdown as if its `ServiceGroup` had asked: the rules of
    /// ``LoopService`` from that point on. For ``LoopRegistry``, which drains one loop of many
    /// (an evicted one) while the others keep running.
    func requestGracefulShutdown() {
        gate.requestStop(.gracefulShutdown)
    }

    /// Counts, logs and traces a refused event; in the caller's task, so that its span is a child
    /// of the caller's context.
    private func refused(_ event: Event, isFirst: Bool) {
        metrics?.recordRefused()
        #if Tracing
        tracing?.refused(event, label: loop.configuration.label, reason: LoopMetrics.refusedDuringShutdownReason)
        #endif
        if isFirst {
            logger.notice("refusing events: the loop service is shutting down")
        }
    }

    /// Runs the loop until graceful shutdown, cancellation, or the loop stopping by other means;
    /// then drains it as described in ``LoopService`` and calls `onShutdown`.
    ///
    /// If the loop stops by other means (someone calls `Loop.stop()`), `run()` returns, which a
    /// `ServiceGroup` by default takes as the signal to end the whole group (see its
    /// `successTerminationBehavior`).
    ///
    /// - Throws: ``LoopServiceError/alreadyRun`` if called more than once. A shutdown itself never
    ///   throws: how it went is in the ``LoopShutdownReport``.
    public func run() async throws {
        guard gate.claimRun() else { throw LoopServiceError.alreadyRun }
        let ending = await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await runUntilStopped()
            } onGracefulShutdown: { [gate] in
                gate.requestStop(.gracefulShutdown)
            }
        } onCancel: { [gate] in
            gate.requestStop(.cancelled)
        }
        let report = LoopShutdownReport(
            finalState: loop.state, statistics: loop.statistics, eventsRefused: gate.refused, ending: ending)
        logger.info(
            "loop service stopped",
            metadata: ["ending": "\(ending)", "statistics": "\(report.statistics)", "refused": "\(report.eventsRefused)"])
        await onShutdown(report)
    }

    private func runUntilStopped() async -> LoopShutdownReport<State>.Ending {
        await withTaskGroup(of: Void.self) { group in
            // The loop lives in a child task, so that cancelling run() stops it too.
            group.addTask { [loop, gate] in
                await loop.run()
                gate.requestStop(.loopStopped)
            }
            let ending: LoopShutdownReport<State>.Ending
            switch await gate.waitForStopRequest() {
            case .loopStopped:
                ending = .loopStopped
            case .cancelled:
                ending = .cancelled
            case .gracefulShutdown:
                logger.info("graceful shutdown: draining the loop", metadata: ["gracePeriod": "\(gracePeriod)"])
                let drained = await drain()
                ending = drained ? .drained : Task.isCancelled ? .cancelled : .gracePeriodExpired
            }
            await loop.stop()
            return ending
        }
    }

    /// Waits, for at most the grace period, until every accepted event is in the loop and the loop
    /// is idle. Returns `false` if the grace period ran out (or the task was cancelled) first; the
    /// loop is then stopping.
    private func drain() async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { [gate, loop] in
                await gate.waitUntilEmpty()
                await loop.waitUntilIdle()
                return true
            }
            group.addTask { [sleep, gracePeriod] in
                // Throws when cancelled: the drain finished first, or run() was cancelled. Either
                // way the loop is not drained by this child.
                try? await sleep(gracePeriod)
                return false
            }
            let drained = await group.next() ?? false
            if drained {
                group.cancelAll()
            } else {
                // Stopping cancels every effect and wakes waitUntilIdle (a stopped loop is idle)
                // and every sendAndWait still waiting (it throws), which empties the gate.
                await loop.stop()
            }
            await group.waitForAll()
            return drained
        }
    }
}
#endif
