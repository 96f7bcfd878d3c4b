#if Services
import FeedbackLoop
import Logging
import ServiceLifecycle

#if Tracing
import FeedbackLoopTracing
#endif

/// Many loops in one service: one `Loop` per entity id (a session, an order, a device),
/// created on first use, evicted when idle, capped, and drained on graceful shutdown.
///
/// ```swift
/// let carts = LoopRegistry<String, Cart.State, Cart.Event>(
///     configuration: .init(maximumLoops: 10_000, idleTimeout: .seconds(600), gracePeriod: .seconds(5))
/// ) { id in
///     Loop(initial: Cart.State(owner: id), reduce: Cart.reduce, feedbacks: Cart.feedbacks(service))
/// }
/// let group = ServiceGroup(services: [carts, httpServer], gracefulShutdownSignals: [.sigterm], logger: logger)
///
/// // In a request handler:
/// let state = try await carts.sendAndWait(.add(item), to: customerID)
/// ```
///
/// ## One loop per id
/// The first use of an id (``withLoop(for:creatingIfAbsent:isolation:_:)``,
/// ``sendAndWait(_:to:)``, ``send(_:to:)``) calls `makeLoop` once and wraps the loop in a
/// ``LoopService``; concurrent first uses of the same id wait for that one loop rather than
/// making their own. A loop that is ending (evicted, removed, or stopped) keeps its id until it
/// has stopped: a use of the id meanwhile waits for the end, then gets a new loop. So two loops
/// of one id never run at once, and an entry is only ever taken out of the registry by the loop
/// it belongs to — never by an older loop of the same id whose end comes late.
///
/// ## Idle eviction
/// A loop nobody has used for ``Configuration/idleTimeout`` (measured on the registry's clock
/// from the end of its last use; a loop in use by ``withLoop(for:creatingIfAbsent:isolation:_:)``
/// is never idle) is evicted: it is drained by ``LoopService``'s graceful-shutdown rules — no new
/// events, its effects get the grace period, then it stops — and leaves the registry.
///
/// ## The cap
/// At most ``Configuration/maximumLoops`` loops exist at once, ending ones included. Past it a
/// use that would create a loop throws ``LoopRegistryError/tooManyLoops`` (and is counted in
/// ``Statistics/refused``); no existing loop is dropped to make room.
///
/// ## Shutdown
/// The registry is a `Service`: run it in a `ServiceGroup` (or call ``run()``). Loops run inside
/// ``run()``; a loop created before it starts already takes events and starts running when
/// ``run()`` does. On graceful shutdown the registry creates no more loops (uses throw
/// ``LoopRegistryError/shuttingDown``) and every loop drains at once, in parallel, by
/// ``LoopService``'s rules; ``run()`` returns when all have stopped. Cancelling ``run()`` stops
/// every loop at once.
///
/// ## Refused uses in traces
/// A use the registry refuses — one counted in ``Statistics/refused``: past the cap, or during
/// shutdown — throws ``LoopRegistryError`` and, when ``Configuration/tracing`` is set (package
/// trait `Tracing`), makes a span named `get-or-create` in the caller's task: a child of the
/// caller's `ServiceContext` (the span of the request that wanted the loop), ended at once, with
/// `feedback_loop.refused` set to the error's code (`tooManyLoops` or `shuttingDown`, as in
/// ``LoopRegistryMetrics``), the error recorded and an error status. A use that got a loop makes no
/// span of the registry's; what it sends is traced by the loop's `LoopTracing`, and an event its
/// loop service refuses is traced as ``LoopService`` says. ``LoopRegistryError/noSuchLoop`` (a
/// use that asked not to create) is an answer, not a refusal: no span, as it is not counted.
///
/// ## Threading
/// Every method may be called from any task. The registry's lock guards only its table; no
/// loop, callback or continuation runs while it is held.
public final class LoopRegistry<ID: Hashable & Sendable, State: Sendable, Event: Sendable>: Service, Sendable {
    /// How a loop ended, handed to `onLoopEnded`.
    public typealias Report = LoopShutdownReport<State>

    /// Limits and timing of the registry.
    public struct Configuration: Sendable {
        /// How many loops may exist at once, ending ones included; at least 1.
        public var maximumLoops: Int
        /// How long a loop may go unused before it is evicted, more than zero; `nil` never
        /// evicts.
        public var idleTimeout: Duration?
        /// How long each loop's drain waits for its effects (on eviction and on graceful
        /// shutdown), zero or more; see ``LoopService``.
        public var gracePeriod: Duration
        /// Where the registry and its loop services log.
        public var logger: Logger
        /// The registry's own figures, if any.
        public var metrics: LoopRegistryMetrics?
        /// Counts events the loop services refused during their drain, if given (the loops' own
        /// figures come from the instrumentation `makeLoop` gives them).
        public var loopMetrics: LoopMetrics?
        #if Tracing
        /// Makes a span for each use the registry refuses ("Refused uses in traces" in
        /// ``LoopRegistry``), if set; `nil`, the default, makes none. The loops' spans, and those
        /// of events their services refuse, come from the `LoopTracing` that `makeLoop` puts in
        /// each loop's `LoopConfiguration/instruments`: give both the same tracer.
        public var tracing: LoopTracing?
        #endif

        /// A configuration with these values.
        public init(
            maximumLoops: Int = 10_000,
            idleTimeout: Duration? = .seconds(600),
            gracePeriod: Duration = .seconds(10),
            logger: Logger = Logger(label: "FeedbackLoopServices.LoopRegistry"),
            metrics: LoopRegistryMetrics? = nil,
            loopMetrics: LoopMetrics? = nil
        ) {
            self.maximumLoops = maximumLoops
            self.idleTimeout = idleTimeout
            self.gracePeriod = gracePeriod
            self.logger = logger
            self.metrics = metrics
            self.loopMetrics = loopMetrics
        }
    }

    /// Why a loop left the registry.
    public struct Exit: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// Idle for ``Configuration/idleTimeout``; drained by graceful-shutdown rules.
        public static var evicted: Exit { Exit("evicted") }
        /// Stopped by ``LoopRegistry/remove(_:)``.
        public static var removed: Exit { Exit("removed") }
        /// The registry shut down (gracefully or by cancellation).
        public static var shutdown: Exit { Exit("shutdown") }
        /// The loop stopped by other means (someone called `Loop.stop()`).
        public static var stopped: Exit { Exit("stopped") }

        public var description: String { name }
    }

    /// The registry's counters.
    public struct Statistics: Hashable, Sendable, CustomStringConvertible {
        /// Loops in the registry now, running or ending.
        public var live = 0
        /// Loops created since the registry was made.
        public var created = 0
        /// Loops evicted for idleness.
        public var evicted = 0
        /// Loops stopped by ``LoopRegistry/remove(_:)``.
        public var removed = 0
        /// Loops whose service has ended (for any reason).
        public var ended = 0
        /// Uses refused: past the cap, or during shutdown.
        public var refused = 0

        /// Counters with these values; the registry makes them, tests compare with them.
        public init(live: Int = 0, created: Int = 0, evicted: Int = 0, removed: Int = 0, ended: Int = 0, refused: Int = 0) {
            self.live = live
            self.created = created
            self.evicted = evicted
            self.removed = removed
            self.ended = ended
            self.refused = refused
        }

        public var description: String {
            "live \(live), created \(created), evicted \(evicted), removed \(removed), ended \(ended), refused \(refused)"
        }
    }

    /// A loop handed to the body of ``withLoop(for:creatingIfAbsent:isolation:_:)``.
    public struct Lease: Sendable {
        /// The id.
        public let id: ID
        /// The id's loop service: send through it (see ``LoopService/sendAndWait(_:)``).
        public let service: LoopService<State, Event>
        /// Whether this use created the loop.
        public let created: Bool
        /// The loop.
        public var loop: Loop<State, Event> { service.loop }
    }

    private struct Entry: Sendable {
        let generation: UInt64
        let service: LoopService<State, Event>
        /// Uses in progress; a leased loop is never evicted.
        var leases: Int
        /// When the last use ended, on the registry's clock.
        var lastUsed: Duration
    }

    private enum Slot {
        /// `makeLoop` is running for this id; other uses wait.
        case creating(waiters: [CheckedContinuation<Void, Never>])
        case live(Entry)
        /// Evicted or removed; other uses wait for its end.
        case ending(Entry, Exit, waiters: [CheckedContinuation<Void, Never>])
    }

    private struct Table {
        var slots: [ID: Slot] = [:]
        var isClosed = false
        var hasRun = false
        var nextGeneration: UInt64 = 0
        var statistics = Statistics()
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// The registry's limits and timing.
    public let configuration: Configuration

    private let table = Lock(Table())
    private let makeService: @Sendable (ID, UInt64, Loop<State, Event>, LoopRegistry) -> LoopService<State, Event>
    private let makeLoop: @Sendable (ID) -> Loop<State, Event>
    private let onLoopEnded: @Sendable (ID, Report, Exit) async -> Void
    private let now: @Sendable () -> Duration
    private let sleep: @Sendable (_ until: Duration) async throws -> Void
    private let newServices: AsyncStream<(ID, LoopService<State, Event>)>
    private let newServicesContinuation: AsyncStream<(ID, LoopService<State, Event>)>.Continuation

    /// Creates an empty registry whose idle times and grace periods are measured by `clock`.
    ///
    /// - Parameters:
    ///   - configuration: The cap, idle timeout and grace period.
    ///   - clock: Measures idleness and the loops' grace periods — a test clock in tests.
    ///   - makeLoop: Makes the loop of an id, on its first use. Called outside any lock, once per
    ///     loop the registry keeps.
    ///   - onLoopEnded: Called once per loop after it stopped, with its report and why it left.
    public init<C: Clock>(
        configuration: Configuration = Configuration(),
        clock: C,
        makeLoop: @escaping @Sendable (ID) -> Loop<State, Event>,
        onLoopEnded: @escaping @Sendable (ID, Report, Exit) async -> Void = { _, _, _ in }
    ) where C.Duration == Duration {
        precondition(configuration.maximumLoops >= 1, "LoopRegistry: maximumLoops must be at least 1")
        precondition(
            configuration.idleTimeout.map { $0 > .zero } ?? true, "LoopRegistry: idleTimeout must be more than zero")
        precondition(configuration.gracePeriod >= .zero, "LoopRegistry: gracePeriod must not be negative")
        self.configuration = configuration
        self.makeLoop = makeLoop
        self.onLoopEnded = onLoopEnded
        let start = clock.now
        self.now = { start.duration(to: clock.now) }
        self.sleep = { offset in try await clock.sleep(until: start.advanced(by: offset), tolerance: nil) }
        self.makeService = { id, generation, loop, registry in
            var logger = configuration.logger
            logger[metadataKey: "loop"] = "\(id)"
            return LoopService(
                loop: loop, gracePeriod: configuration.gracePeriod, clock: clock, logger: logger,
                metrics: configuration.loopMetrics
            ) { [weak registry] report in
                await registry?.ended(id, generation: generation, report: report)
            }
        }
        (newServices, newServicesContinuation) = AsyncStream.makeStream(of: (ID, LoopService<State, Event>).self)
    }

    /// Creates an empty registry that measures time with a `ContinuousClock`.
    ///
    /// See ``init(configuration:clock:makeLoop:onLoopEnded:)``.
    public convenience init(
        configuration: Configuration = Configuration(),
        makeLoop: @escaping @Sendable (ID) -> Loop<State, Event>,
        onLoopEnded: @escaping @Sendable (ID, Report, Exit) async -> Void = { _, _, _ in }
    ) {
        self.init(configuration: configuration, clock: ContinuousClock(), makeLoop: makeLoop, onLoopEnded: onLoopEnded)
    }

    // MARK: Using loops

    /// Runs `body` with the loop of `id`, creating it first if there is none. The loop is not
    /// evicted while `body` runs, and its idle time starts again when `body` returns.
    ///
    /// If the id's loop is ending, this waits for its end (at most its grace period) and then
    /// creates a new one.
    ///
    /// - Parameters:
    ///   - id: The entity whose loop `body` gets.
    ///   - creatingIfAbsent: `false` to use only a loop that is already live.
    ///   - isolation: Where `body` runs: the caller's actor, by default.
    ///   - body: What to do with the loop; it is not evicted meanwhile.
    /// - Throws: ``LoopRegistryError`` (`tooManyLoops`, `shuttingDown`, or `noSuchLoop` when
    ///   `creatingIfAbsent` is `false`) before `body` runs; otherwise what `body` throws.
    ///   Cancelling the caller does not cut short a wait for a loop being made or ending (at
    ///   most its grace period).
    public func withLoop<Result>(
        for id: ID,
        creatingIfAbsent: Bool = true,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (Lease) async throws -> sending Result
    ) async throws -> sending Result {
        let lease = try await acquire(id, creatingIfAbsent: creatingIfAbsent)
        defer { release(id, generation: lease.generation) }
        return try await body(Lease(id: id, service: lease.service, created: lease.created))
    }

    /// Sends an event to the loop of `id` (created on first use) and returns the state right
    /// after it was reduced; see ``LoopService/sendAndWait(_:)``.
    ///
    /// - Throws: ``LoopRegistryError`` if no loop could be had; otherwise what
    ///   ``LoopService/sendAndWait(_:)`` throws.
    @discardableResult
    public func sendAndWait(_ event: Event, to id: ID) async throws -> State {
        try await withLoop(for: id) { try await $0.service.sendAndWait(event) }
    }

    /// Sends an event to the loop of `id` (created on first use) without waiting for it to be
    /// reduced; see ``LoopService/send(_:)``.
    ///
    /// - Returns: `false` if the loop's service refused it (shutdown had begun).
    /// - Throws: ``LoopRegistryError`` if no loop could be had.
    @discardableResult
    public func send(_ event: Event, to id: ID) async throws -> Bool {
        try await withLoop(for: id) { $0.service.send(event) }
    }

    /// The live loop service of `id`, if any; counts as a use (its idle time starts again).
    /// An ending loop is not returned.
    public func existing(_ id: ID) -> LoopService<State, Event>? {
        let clock = now()
        return table.withLock { table -> LoopService<State, Event>? in
            guard case .live(var entry) = table.slots[id] else { return nil }
            entry.lastUsed = max(entry.lastUsed, clock)
            table.slots[id] = .live(entry)
            return entry.service
        }
    }

    /// Stops the loop of `id` now — its effects are cancelled, not drained — and takes it out of
    /// the registry.
    ///
    /// - Returns: The loop's final state, or `nil` if the id had no live or ending loop (a loop
    ///   still being created counts as absent: the removal is ordered before that creation).
    @discardableResult
    public func remove(_ id: ID) async -> State? {
        let (target, marked) = table.withLock { table -> (Entry?, Bool) in
            switch table.slots[id] {
            case .live(let entry):
                table.slots[id] = .ending(entry, .removed, waiters: [])
                table.statistics.removed += 1
                return (entry, true)
            case .ending(let entry, _, _):
                return (entry, false)
            case .creating, nil:
                return (nil, false)
            }
        }
        guard let target else { return nil }
        if marked { configuration.metrics?.removed.increment() }
        await target.service.loop.stop()
        let (tookOut, waiters) = table.withLock { table -> (Bool, [CheckedContinuation<Void, Never>]) in
            guard case .ending(let entry, _, let waiters) = table.slots[id], entry.generation == target.generation else {
                return (false, [])
            }
            table.slots[id] = nil
            table.statistics.live -= 1
            return (true, waiters)
        }
        if tookOut { configuration.metrics?.live.decrement() }
        for waiter in waiters { waiter.resume() }
        return target.service.loop.state
    }

    /// The ids that have a loop (running or ending), in no particular order.
    public var ids: [ID] {
        table.withLock { table in
            table.slots.compactMap { id, slot in
                if case .creating = slot { return nil }
                return id
            }
        }
    }

    /// The number of loops in the registry, running or ending.
    public var count: Int {
        table.withLock { $0.statistics.live }
    }

    /// The registry's counters.
    public var statistics: Statistics {
        table.withLock { $0.statistics }
    }

    // MARK: Running

    /// Runs every loop until graceful shutdown or cancellation, evicting idle ones; then drains
    /// each by ``LoopService``'s rules and returns when all have stopped.
    ///
    /// - Throws: ``LoopRegistryError/alreadyRun`` if called more than once.
    public func run() async throws {
        let isFirstRun = table.withLock { table in
            defer { table.hasRun = true }
            return !table.hasRun
        }
        guard isFirstRun else { throw LoopRegistryError.alreadyRun }
        await withTaskCancellationOrGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { sweeping in
                sweeping.addTask { await self.evictIdleLoops() }
                await withDiscardingTaskGroup { group in
                    // Each child inherits this task's graceful-shutdown trigger and cancellation,
                    // so every loop starts draining the moment the registry is told to.
                    for await (id, service) in newServices {
                        group.addTask { [logger = configuration.logger] in
                            do {
                                try await service.run()
                            } catch {
                                logger.error("the loop of \(id) could not run: \(error)")
                            }
                        }
                    }
                }
                sweeping.cancelAll()
            }
        } onCancelOrGracefulShutdown: { [self] in
            close()
        }
        configuration.logger.info("loop registry stopped", metadata: ["statistics": "\(statistics)"])
    }

    /// Returns once the registry has begun shutting down: it creates no more loops and each
    /// is draining. For readiness checks and tests.
    public func waitUntilShuttingDown() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let isClosed = table.withLock { table -> Bool in
                if !table.isClosed { table.closeWaiters.append(waiter) }
                return table.isClosed
            }
            if isClosed { waiter.resume() }
        }
    }

    /// Whether the registry still creates loops: `true` until shutdown begins.
    public var isAcceptingLoops: Bool {
        table.withLock { !$0.isClosed }
    }

    // MARK: Internals

    private enum Step {
        case found(Entry)
        case create(generation: UInt64)
        case wait
        case refuse(LoopRegistryError)
    }

    private struct Acquired {
        var generation: UInt64
        var service: LoopService<State, Event>
        var created: Bool
    }

    private func acquire(_ id: ID, creatingIfAbsent: Bool) async throws(LoopRegistryError) -> Acquired {
        while true {
            let step = table.withLock { table -> Step in
                if table.isClosed {
                    table.statistics.refused += 1
                    return .refuse(.shuttingDown)
                }
                switch table.slots[id] {
                case .live(var entry):
                    entry.leases += 1
                    table.slots[id] = .live(entry)
                    return .found(entry)
                case .creating, .ending:
                    return .wait
                case nil:
                    guard creatingIfAbsent else { return .refuse(.noSuchLoop) }
                    guard table.slots.count < configuration.maximumLoops else {
                        table.statistics.refused += 1
                        return .refuse(.tooManyLoops)
                    }
                    table.slots[id] = .creating(waiters: [])
                    defer { table.nextGeneration += 1 }
                    return .create(generation: table.nextGeneration)
                }
            }
            switch step {
            case .found(let entry):
                return Acquired(generation: entry.generation, service: entry.service, created: false)
            case .wait:
                await waitForSlot(id)
            case .refuse(let error):
                record(refusal: error)
                throw error
            case .create(let generation):
                return try await create(id, generation: generation)
            }
        }
    }

    private func create(_ id: ID, generation: UInt64) async throws(LoopRegistryError) -> Acquired {
        let service = makeService(id, generation, makeLoop(id), self)
        let lastUsed = now()
        let (installed, waiters) = table.withLock { table -> (Bool, [CheckedContinuation<Void, Never>]) in
            // Only this call changes a `.creating` slot, so it is still ours.
            guard case .creating(let waiters) = table.slots[id] else { return (false, []) }
            guard !table.isClosed else {
                table.slots[id] = nil
                table.statistics.refused += 1
                return (false, waiters)
            }
            table.slots[id] = .live(Entry(generation: generation, service: service, leases: 1, lastUsed: lastUsed))
            table.statistics.created += 1
            table.statistics.live += 1
            // Yielded inside the lock, so that every loop in the table reaches run()'s task group
            // before close() finishes the stream. The stream only buffers here.
            newServicesContinuation.yield((id, service))
            return (true, waiters)
        }
        for waiter in waiters { waiter.resume() }
        guard installed else {
            // Shutdown began while the loop was being made: it never ran as a service.
            await service.loop.stop()
            record(refusal: .shuttingDown)
            throw .shuttingDown
        }
        configuration.metrics?.created.increment()
        configuration.metrics?.live.increment()
        return Acquired(generation: generation, service: service, created: true)
    }

    private func waitForSlot(_ id: ID) async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let mustWait = table.withLock { table -> Bool in
                switch table.slots[id] {
                case .creating(var waiters):
                    waiters.append(waiter)
                    table.slots[id] = .creating(waiters: waiters)
                    return true
                case .ending(let entry, let exit, var waiters):
                    waiters.append(waiter)
                    table.slots[id] = .ending(entry, exit, waiters: waiters)
                    return true
                case .live, nil:
                    return false
                }
            }
            if !mustWait { waiter.resume() }
        }
    }

    private func release(_ id: ID, generation: UInt64) {
        let clock = now()
        table.withLock { table in
            switch table.slots[id] {
            case .live(var entry) where entry.generation == generation:
                entry.leases -= 1
                entry.lastUsed = max(entry.lastUsed, clock)
                table.slots[id] = .live(entry)
            case .ending(var entry, let exit, let waiters) where entry.generation == generation:
                entry.leases -= 1
                table.slots[id] = .ending(entry, exit, waiters: waiters)
            default:
                break
            }
        }
    }

    /// Counts and traces a refused use; in the caller's task, so that its span is a child of the
    /// caller's context. `noSuchLoop` is an answer to a use that asked not to create, counted
    /// nowhere, and not traced either.
    private func record(refusal error: LoopRegistryError) {
        switch error.code {
        case .tooManyLoops: configuration.metrics?.refusedTooMany.increment()
        case .shuttingDown: configuration.metrics?.refusedShuttingDown.increment()
        default: return
        }
        #if Tracing
        configuration.tracing?.refused("get-or-create", reason: error.code.description, error: error)
        #endif
    }

    /// Called by each loop's service once its loop stopped. Takes the entry out only if it is
    /// still this loop's: a late end of an older loop of the same id must not remove a newer one.
    private func ended(_ id: ID, generation: UInt64, report: Report) async {
        let (exit, waiters, wasInTable) = table.withLock {
            table -> (Exit, [CheckedContinuation<Void, Never>], Bool) in
            table.statistics.ended += 1
            switch table.slots[id] {
            case .live(let entry) where entry.generation == generation:
                table.slots[id] = nil
                table.statistics.live -= 1
                return (table.isClosed ? .shutdown : .stopped, [], true)
            case .ending(let entry, let exit, let waiters) where entry.generation == generation:
                table.slots[id] = nil
                table.statistics.live -= 1
                return (exit, waiters, true)
            default:
                // remove(_:) already took it out.
                return (.removed, [], false)
            }
        }
        if wasInTable { configuration.metrics?.live.decrement() }
        for waiter in waiters { waiter.resume() }
        configuration.logger.debug(
            "loop ended", metadata: ["loop": "\(id)", "exit": "\(exit)", "ending": "\(report.ending)"])
        await onLoopEnded(id, report, exit)
    }

    private func close() {
        let waiters = table.withLock { table -> [CheckedContinuation<Void, Never>] in
            guard !table.isClosed else { return [] }
            table.isClosed = true
            // Inside the lock for the same reason as the yield in create(_:generation:).
            newServicesContinuation.finish()
            defer { table.closeWaiters = [] }
            return table.closeWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Evicts each loop once it has been unused for the idle timeout, until cancelled.
    private func evictIdleLoops() async {
        guard let idleTimeout = configuration.idleTimeout else { return }
        while !Task.isCancelled {
            let clock = now()
            let (due, next) = table.withLock { table -> ([(ID, LoopService<State, Event>)], Duration) in
                var due: [(ID, LoopService<State, Event>)] = []
                // A loop used from now on is due no earlier than this.
                var next = clock + idleTimeout
                for (id, slot) in table.slots {
                    guard case .live(let entry) = slot, entry.leases == 0 else { continue }
                    let deadline = entry.lastUsed + idleTimeout
                    if deadline <= clock {
                        table.slots[id] = .ending(entry, .evicted, waiters: [])
                        table.statistics.evicted += 1
                        due.append((id, entry.service))
                    } else {
                        next = min(next, deadline)
                    }
                }
                return (due, next)
            }
            for (id, service) in due {
                configuration.metrics?.evicted.increment()
                configuration.logger.debug("evicting idle loop", metadata: ["loop": "\(id)"])
                service.requestGracefulShutdown()
            }
            do {
                try await sleep(next)
            } catch {
                return
            }
        }
    }
}
#endif
