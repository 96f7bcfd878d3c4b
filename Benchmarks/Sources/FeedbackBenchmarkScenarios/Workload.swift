import FeedbackLoop

/// Who runs a workload: the bare limit, one of FeedbackLoop's backends, or the peer
/// (``CombineSystem``, the `system` operator on OpenCombine).
public enum Contender: Hashable, Sendable, CustomStringConvertible {
    case bare
    case backend(Backend)
    case peer

    /// The name used on the command line and as a report column.
    public var description: String {
        switch self {
        case .bare: "bare"
        case .backend(let backend): backend.rawValue
        case .peer: PeerSystems.name
        }
    }
}

/// The workloads the peers were measured on, untimed, for instruction counting under valgrind
/// callgrind and for the package-benchmark suite: W1 external sends into a counter loop (the
/// `throughput` scenario with 1 sender), W2 ping-pong (`pingpong`), W3 switch-latest churn
/// (`cancellation`) with a never-ending `.run` effect, and W3 with a `.callback` effect, which
/// needs no task. Each checks its result like the scenarios do.
///
/// Three more have no peer (its `system` has no composition): an event into a child feature's own
/// loop, an event into a parent of 1,000 keyed children of that feature, one changing per event
/// (`composition`), and an event into a loop holding the same 1,000 children in a plain array
/// with no feedback; the second over the third is issue 27's bound, in instructions, and the
/// second over the first issue 13's ratio.
///
/// `loops` is the `loops` scenario's life of an idle loop, counted per loop: create it (one
/// feedback, whose query stays `nil`), let it start, stop it and release it.
///
/// `service` is the `service` scenario's closed loop: 1,000 live counter loops, one sender thread,
/// events round robin, each sent once the previous one was observed, so that every event wakes an
/// idle loop; its bare limit is a task parked per unit on a continuation and resumed per event.
/// `service-actor` is the same harness around its other bare limit, an actor per unit entered by
/// a new `Task` per event; it runs only bare.
///
/// `service-executor` is the same closed loop on `actor` loops given one executor
/// (`LoopConfiguration.executor`), the sender an actor on that executor: an idle loop reduces the
/// event in `send` (`Loop.send(_:isolation:)`). `service-executor-hop` is the same sender passing
/// no isolation, as a caller anywhere else: a task per wake-up, whose job waits for the executor.
/// Both run on `actor` only, the backend that runs on an executor.
public enum Workload: String, CaseIterable, Codable, Sendable {
    case w1, w2, w3
    case w3callback = "w3-callback"
    case child
    case children = "keyed-children"
    case plainArray = "plain-array"
    case loops
    case service
    case serviceActor = "service-actor"
    case serviceExecutor = "service-executor"
    case serviceExecutorHop = "service-executor-hop"

    /// The scenario this workload reproduces.
    public var scenario: Scenario {
        switch self {
        case .w1: .throughput
        case .w2: .pingpong
        case .w3, .w3callback: .cancellation
        case .child, .children, .plainArray: .composition
        case .loops: .loops
        case .service, .serviceActor, .serviceExecutor, .serviceExecutorHop: .service
        }
    }

    /// Whether the peer runs this workload.
    public var hasPeer: Bool { scenario != .composition && scenario != .service }

    /// Whether the backends run this workload; `service-actor` is a bare limit only.
    public var runsOnBackends: Bool { self != .serviceActor }

    /// Whether `backend` runs this workload: `service-executor` and `service-executor-hop` run on
    /// `actor` only, the backend that runs on an executor.
    public func runs(on backend: Backend) -> Bool {
        switch self {
        case .serviceExecutor, .serviceExecutorHop: backend == .actor
        default: runsOnBackends
        }
    }

    /// Whether the bare limit runs this workload: the executor workloads have none of their own
    /// (the `service` table's bare rows are the hand-offs to compare them with).
    public var runsBare: Bool { self != .serviceExecutor && self != .serviceExecutorHop }

    /// Units per callgrind run: sends, cycles or switches.
    public var callgrindUnits: Int {
        switch self {
        case .w1: 100_000
        case .w2: 50_000
        case .w3, .w3callback: 10_000
        case .child: 100_000
        case .children, .plainArray: 20_000
        case .loops: 10_000
        case .service, .serviceActor, .serviceExecutor, .serviceExecutorHop: 20_000
        }
    }

    /// The workload for a scenario, if it has one (`cancellation` gives W3 with `.run`,
    /// `composition` the keyed children).
    public init?(scenario: Scenario) {
        if scenario == .composition {
            self = .children
            return
        }
        guard let workload = Self.allCases.first(where: { $0.scenario == scenario }) else { return nil }
        self = workload
    }

    /// Runs `units` sends / cycles / switches on `backend`, or on the bare limit when `backend` is
    /// `nil`.
    public func run(_ backend: Backend?, units: Int) async throws {
        try await run(backend.map(Contender.backend) ?? .bare, units: units)
    }

    /// Runs `units` sends / cycles / switches on `contender`. Creation and teardown are included;
    /// run two sizes and take the difference to get the cost per unit. The bare limit of both W3
    /// workloads is a bare task churn, the floor of any `.run` effect; the peer's W3 effect is a
    /// never-ending publisher, so its two W3 workloads are the same run.
    public func run(_ contender: Contender, units: Int) async throws {
        switch (self, contender) {
        case (.w1, .backend(let backend)):
            try await w1OnBackend(backend, units: units)
        case (.w1, .bare):
            _ = await ThroughputScenario.bare(events: units, senders: 1)
        case (.w1, .peer):
            let loop = PeerSystems.counter()
            for _ in 0..<units { loop.send(1) }
            try PeerCheck(run: "w1, peer", expectedState: units, finalState: loop.state, reduced: loop.reduced).validate()
            loop.stop()
        case (.w2, .backend(let backend)):
            try await w2OnBackend(backend, units: units)
        case (.w2, .bare):
            _ = await PingPongScenario.bare(cycles: units)
        case (.w2, .peer):
            let loop = PeerSystems.pingPong(cycles: units)
            loop.send(.start)
            try PeerCheck(run: "w2, peer", expectedState: units, finalState: loop.state.count, reduced: loop.reduced, expectedReduced: units + 1)
                .validate()
            loop.stop()
        case (.w3, .backend(let backend)), (.w3callback, .backend(let backend)):
            try await w3OnBackend(backend, units: units)
        case (.w3, .bare), (.w3callback, .bare):
            _ = try await CancellationScenario.bareChurn(cycles: units)
        case (.w3, .peer), (.w3callback, .peer):
            _ = try CancellationScenario.peerChurn(cycles: units)
        case (.child, .backend(let backend)):
            try await childOnBackend(backend, units: units)
        case (.children, .backend(let backend)):
            try await childrenOnBackend(backend, units: units)
        case (.plainArray, .backend(let backend)):
            try await plainArrayOnBackend(backend, units: units)
        case (.child, .bare), (.children, .bare), (.plainArray, .bare):
            _ = await CompositionScenario.bare(events: units)
        case (.child, .peer), (.children, .peer), (.plainArray, .peer):
            throw ScenarioFailure("\(rawValue): \(PeerSystems.name) has no composition of features to run it on")
        case (.loops, .backend(let backend)):
            try await loopsOnBackend(backend, units: units)
        case (.loops, .bare):
            _ = LoopsScenario.bare(count: units)
        case (.loops, .peer):
            _ = try LoopsScenario.measurePeer(count: units)
        case (.service, .backend(let backend)):
            try await serviceOn(LoopUnits.self, backend: backend, units: units)
        case (.service, .bare):
            try await serviceOn(ParkedUnits.self, backend: .callback, units: units)
        case (.serviceActor, .bare):
            try await serviceOn(ActorUnits.self, backend: .callback, units: units)
        case (.serviceActor, .backend):
            throw ScenarioFailure("\(rawValue) is a bare limit: run it with --bare")
        case (.serviceExecutor, .backend(.actor)), (.serviceExecutorHop, .backend(.actor)):
            try await ServiceScenario.closedLoopOnExecutor(events: units, inPlace: self == .serviceExecutor)
        case (.serviceExecutor, _), (.serviceExecutorHop, _):
            throw ScenarioFailure("\(rawValue) runs on --backend actor only, the backend that runs on an executor")
        case (.service, .peer), (.serviceActor, .peer):
            throw ScenarioFailure("\(rawValue): \(PeerSystems.name) reduces on the sender's thread and has no wake-up to measure")
        }
    }
}

// Each workload on a backend in a function of its own, so that the optimiser treats the measured
// code alike whatever the other workloads hold: inlined into one large `run`, a send's lock
// closure was outlined or not by the caller's size (W1: 207 or 228 instructions a send).
extension Workload {
    @inline(never)
    func w1OnBackend(_ backend: Backend, units: Int) async throws {
        let loop = Systems.counter(backend)
        for _ in 0..<units { loop.send(1) }
        await loop.waitUntilIdle()
        try ThroughputScenario.check(backend, senders: 1, sent: units, loop: loop)
        await loop.stop()
    }

    @inline(never)
    func w2OnBackend(_ backend: Backend, units: Int) async throws {
        let loop = Systems.pingPong(backend, cycles: units)
        loop.send(.start)
        await loop.waitUntilIdle()
        try PingPongScenario.check(backend, cycles: units, state: loop.state, statistics: loop.statistics)
        await loop.stop()
    }

    @inline(never)
    func w3OnBackend(_ backend: Backend, units: Int) async throws {
        let census = EffectCensus()
        let loop = self == .w3 ? Systems.churn(backend, census: census) : Systems.churnCallback(backend, census: census)
        for _ in 0..<units { loop.send(.next) }
        _ = try await loop.sendAndWait(.sync)
        await loop.stop()
        try RunCheck(
            run: "\(rawValue), \(backend)", expectedState: units, finalState: loop.state.generation,
            statistics: loop.statistics, expectedStarted: units + 1, expectedCancelled: units + 1,
            census: census.counts
        ).validate()
    }

    @inline(never)
    func childOnBackend(_ backend: Backend, units: Int) async throws {
        let loop = CompositionScenario.child(backend)
        for _ in 0..<units { loop.send(1) }
        await loop.waitUntilIdle()
        try RunCheck(
            run: "\(rawValue), \(backend)", expectedState: units, finalState: loop.state,
            expectedReduced: units, statistics: loop.statistics, expectedStarted: 0
        ).validate()
        await loop.stop()
    }

    @inline(never)
    func childrenOnBackend(_ backend: Backend, units: Int) async throws {
        let loop = CompositionScenario.parent(backend)
        for index in 0..<units { loop.send(.child(index % CompositionScenario.children, 1)) }
        await loop.waitUntilIdle()
        try RunCheck(
            run: "\(rawValue), \(backend)", expectedState: units,
            finalState: loop.state.children.values.reduce(0, +), expectedReduced: units,
            statistics: loop.statistics, expectedStarted: 0
        ).validate()
        await loop.stop()
    }

    @inline(never)
    func plainArrayOnBackend(_ backend: Backend, units: Int) async throws {
        let loop = CompositionScenario.plainArray(backend)
        for index in 0..<units { loop.send(.child(index % CompositionScenario.children, 1)) }
        await loop.waitUntilIdle()
        try RunCheck(
            run: "\(rawValue), \(backend)", expectedState: units, finalState: loop.state.reduce(0, +),
            expectedReduced: units, statistics: loop.statistics, expectedStarted: 0
        ).validate()
        await loop.stop()
    }

    @inline(never)
    func loopsOnBackend(_ backend: Backend, units: Int) async throws {
        var loops: [Loop<Int, Int>] = []
        loops.reserveCapacity(units)
        for _ in 0..<units { loops.append(Systems.idleCounter(backend)) }
        for loop in loops { await loop.waitUntilIdle() }
        // Checked without building a message per loop, which would be counted with the loop.
        if let index = loops.firstIndex(where: { $0.state != 0 || $0.statistics != LoopStatistics() }) {
            try RunCheck(
                run: "loops, \(backend), loop \(index)", expectedState: 0, finalState: loops[index].state,
                expectedReduced: 0, statistics: loops[index].statistics, expectedStarted: 0
            ).validate()
        }
        for loop in loops { await loop.stop() }
    }
}

extension Workload {
    /// The `service` scenario's closed loop over ``ServiceScenario/sessions`` units, untimed.
    @inline(never)
    func serviceOn<Units: ServiceUnits>(_: Units.Type, backend: Backend, units events: Int) async throws {
        _ = try await ServiceScenario.closedLoop(Units.self, backend: backend, loops: ServiceScenario.sessions, events: events)
    }
}

/// The peer's version of ``RunCheck``: the final state, one state per event, and (with a census)
/// every effect that began was cancelled once the system stopped.
struct PeerCheck {
    var run: String
    var expectedState: Int
    var finalState: Int
    var reduced: Int
    var expectedReduced: Int?
    var census: EffectCensus.Counts?
    var expectedStarted: Int?

    init(
        run: String, expectedState: Int, finalState: Int, reduced: Int, expectedReduced: Int? = nil,
        census: EffectCensus.Counts? = nil, expectedStarted: Int? = nil
    ) {
        self.run = run
        self.expectedState = expectedState
        self.finalState = finalState
        self.reduced = reduced
        self.expectedReduced = expectedReduced
        self.census = census
        self.expectedStarted = expectedStarted
    }

    func validate() throws(ScenarioFailure) {
        func fail(_ what: String) -> ScenarioFailure { ScenarioFailure("\(run): \(what)") }
        guard finalState == expectedState else { throw fail("final state \(finalState), expected \(expectedState)") }
        let expected = expectedReduced ?? expectedState
        guard reduced == expected else { throw fail("\(reduced) events reduced, expected \(expected)") }
        if let census {
            if let expectedStarted, census.started != expectedStarted {
                throw fail("\(census.started) effects started, expected \(expectedStarted)")
            }
            guard census.started == census.cancelled else {
                throw fail("\(census.started - census.cancelled) effects leaked (\(census.started) began, \(census.cancelled) were cancelled)")
            }
        }
    }
}
