import FeedbackLoop

/// A pure, single-threaded interpreter of the loop's semantics: the state, the FIFO queue, each
/// feedback constructor's start/cancel decisions, the table of effects, every statistics counter,
/// observers and stop, and the lives of a child feature: an event an effect of the child sent is
/// dropped once that life has ended, whether the effect was cancelled or had finished. What a running loop must do, step by step, with no concurrency at all.
///
/// Each operation runs to quiescence (the queue drained), as the deterministic harness waits for
/// the engine to do after each step.
struct ReferenceModel {
    typealias State = ModelSystem.State
    typealias Event = ModelSystem.Event

    enum Status: Hashable { case running, finished, cancelled, failed }

    /// The steps of an effect's life, as `LoopInstrumentation.onEffect` reports them.
    enum Life: Hashable, CustomStringConvertible {
        case started, finished, cancelled, failed
        var description: String { "\(self)".components(separatedBy: ".").last! }

        init(_ kind: EffectLifecycleEvent.Kind) {
            switch kind {
            case .started: self = .started
            case .finished: self = .finished
            case .cancelled: self = .cancelled
            case .failed: self = .failed
            }
        }
    }

    struct EffectRecord {
        var kind: ModelSystem.Kind
        var status: Status
        /// A `.run` effect's task has not returned yet (the test's effects ignore cancellation
        /// until told to return).
        var taskAlive: Bool
        var life: [Life]
    }

    private(set) var state: State
    private(set) var stopped = false
    private(set) var statistics = LoopStatistics()
    private(set) var effects: [EffectKey: EffectRecord] = [:]
    private(set) var drops: [DropRecord] = []
    private(set) var observers: [Int: [State]] = [:]
    private var generations: [EffectKey.Partial: Int] = [:]
    /// Each queued event, the effect that sent it, and the child life it belongs to.
    private var queue: [(event: Event, from: EffectKey?, life: Int?)] = []
    /// Set while a `sendAndWait` event is in the queue: the state right after it.
    private var answer: (tag: Int, state: State?)?

    // Each feedback's memory, as its constructor keeps it.
    private var aLast: Int?
    private var aRunning: EffectKey?
    private var bRunning: EffectKey?
    private var cPresent = false
    private var cRunning: EffectKey?
    private var flagWasTrue = false
    private var flagRunning: EffectKey?
    private var setLast: Set<Int> = []
    private var setRunning: [Int: EffectKey] = [:]
    // The kid: its current life, the value its skippingRepeated last saw, the effect it runs.
    private var kidLife: Int?
    private var kidLast: Int?
    private var kidRunning: EffectKey?
    private var nextLife = 0
    private var endedLives: Set<Int> = []
    /// The life each of the kid's effects belongs to.
    private(set) var lifeOf: [EffectKey: Int] = [:]
    /// Concurrent mode: how many transitions had been replayed when each life ended.
    private(set) var lifeEndedAt: [Int: Int] = [:]

    struct DropRecord: Hashable, CustomStringConvertible {
        var event: Event
        var reason: DropReason
        var description: String { "\(event) \(reason)" }
    }

    /// A loop that starts at `initial`. When `replaying` an observed run, the events the
    /// feedbacks queue are not reduced here: the run's transition log says what became of them.
    init(initial: State, replaying: Bool = false) {
        state = initial
        react(to: nil)
        if replaying { queue.removeAll() } else { drain() }
    }

    /// The effects whose work is still under way, as the loop's registry holds them.
    var registryCount: Int {
        effects.values.count { ($0.kind == .run && $0.taskAlive) || ($0.kind == .callback && $0.status == .running) }
    }

    /// The keys of every commandable effect started so far, in a stable order.
    var controlledKeys: [EffectKey] {
        effects.filter { $0.value.kind == .run || $0.value.kind == .callback }.keys.sorted()
    }

    var expectedStatistics: LoopStatistics {
        var statistics = self.statistics
        statistics.effectsRunning = effects.values.count { $0.status == .running }
        return statistics
    }

    // MARK: Steps

    mutating func send(_ event: Event) {
        guard !stopped else {
            statistics.eventsDroppedAfterStop += 1
            drops.append(DropRecord(event: event, reason: .afterStop))
            return
        }
        queue.append((event, nil, nil))
        drain()
    }

    /// The state a `sendAndWait` returns, or `nil` when it throws `LoopError.stopped`.
    mutating func sendAndWait(_ event: Event) -> State? {
        guard !stopped else {
            statistics.eventsDroppedAfterStop += 1
            drops.append(DropRecord(event: event, reason: .afterStop))
            return nil
        }
        answer = (event.tag, nil)
        queue.append((event, nil, nil))
        drain()
        defer { answer = nil }
        return answer?.state
    }

    /// Whether the effect's code can still act: a callback effect's sink always can (it may
    /// outlive the effect); a `.run` effect's only while its task is alive.
    func canAct(_ key: EffectKey) -> Bool {
        guard let effect = effects[key] else { return false }
        return effect.kind == .callback || effect.taskAlive
    }

    mutating func effectSends(_ key: EffectKey, _ event: Event) {
        guard effects[key]?.status == .running else {
            statistics.eventsDroppedFromCancelledEffects += 1
            drops.append(DropRecord(event: event, reason: .fromCancelledEffect))
            return
        }
        queue.append((event, key, lifeOf[key]))
        drain()
    }

    /// `finish()` / `finish(sending:)`, and for a `.run` effect the return of its task.
    mutating func effectFinishes(_ key: EffectKey, sending event: Event?) {
        guard var effect = effects[key] else { return }
        if effect.kind == .run { effect.taskAlive = false }
        if effect.status == .running {
            effect.status = .finished
            effect.life.append(.finished)
            statistics.effectsFinished += 1
            effects[key] = effect
            if let event {
                queue.append((event, key, lifeOf[key]))
                drain()
            }
        } else {
            effects[key] = effect
            if let event {
                statistics.eventsDroppedFromCancelledEffects += 1
                drops.append(DropRecord(event: event, reason: .fromCancelledEffect))
            }
        }
    }

    /// A `.run` effect's body throws.
    mutating func effectFails(_ key: EffectKey) {
        guard var effect = effects[key], effect.kind == .run else { return }
        effect.taskAlive = false
        if effect.status == .running {
            effect.status = .failed
            effect.life.append(.failed)
            statistics.effectsFailed += 1
        }
        effects[key] = effect
    }

    mutating func addObserver(_ id: Int) {
        observers[id] = [state]
    }

    mutating func removeObserver(_ id: Int) -> [State]? {
        observers.removeValue(forKey: id)
    }

    /// Stops: every running effect is cancelled, observers finish; the harness then lets every
    /// task return.
    mutating func stop() {
        guard !stopped else { return }
        stopped = true
        precondition(queue.isEmpty, "the model stops only at quiescence")
        for key in effects.keys.sorted() where effects[key]?.status == .running {
            cancel(key)
        }
        for key in effects.keys { effects[key]?.taskAlive = false }
    }

    // MARK: Replaying an observed run

    /// Concurrent mode: the feedbacks' decisions over a transition the loop was seen to make
    /// (the state after `event`), without reducing or queueing anything. Afterwards ``effects``
    /// holds every effect the feedbacks started, those they decided to cancel as `.cancelled`.
    mutating func replay(after state: State, event: Event) {
        self.state = state
        replayed += 1
        react(to: event)
        queue.removeAll()
    }

    // MARK: The machine

    private mutating func drain() {
        while !queue.isEmpty {
            let (event, from, life) = queue.removeFirst()
            if let from, effects[from]?.status == .cancelled {
                statistics.eventsDroppedFromCancelledEffects += 1
                drops.append(DropRecord(event: event, reason: .fromCancelledEffect))
                continue
            }
            if let life, endedLives.contains(life) {
                statistics.eventsDroppedFromCancelledEffects += 1
                drops.append(DropRecord(event: event, reason: .fromCancelledEffect))
                continue
            }
            ModelSystem.reduce(&state, event)
            statistics.eventsReduced += 1
            if answer?.tag == event.tag && from == nil && answer?.state == nil { answer?.state = state }
            react(to: event)
            for id in observers.keys { observers[id]?.append(state) }
        }
    }

    private mutating func react(to event: Event?) {
        // 0: skippingRepeated(a)
        if state.a != aLast {
            aLast = state.a
            if let running = aRunning { aRunning = nil; cancel(running) }
            if let a = state.a { aRunning = start(feedback: 0, value: a) }
        }
        // 1: lensing(b)
        if let running = bRunning { bRunning = nil; cancel(running) }
        if let b = state.b { bRunning = start(feedback: 1, value: b) }
        // 2: firstValueAfterNil(c)
        switch (cPresent, state.c) {
        case (false, let c?):
            cPresent = true
            cRunning = start(feedback: 2, value: c)
        case (true, nil):
            cPresent = false
            if let running = cRunning { cRunning = nil; cancel(running) }
        default:
            break
        }
        // 3: whenBecomesTrue(flag)
        if state.flag != flagWasTrue {
            flagWasTrue = state.flag
            if state.flag {
                flagRunning = start(feedback: 3, value: 0)
            } else if let running = flagRunning {
                flagRunning = nil
                cancel(running)
            }
        }
        // 4: requests(set)
        if state.set != setLast {
            for request in setLast.subtracting(state.set) {
                if let running = setRunning.removeValue(forKey: request) { cancel(running) }
            }
            for request in state.set.subtracting(setLast).sorted() {
                if let key = start(feedback: 4, value: request) { setRunning[request] = key }
            }
            setLast = state.set
        }
        // 5: custom(ping)
        if event?.op == .ping { _ = start(feedback: 5, value: 0) }
        // 6: the kid, a child lifted by a ChildScope, with one skippingRepeated over its value.
        switch (kidLife, state.kid) {
        case (nil, let value?):
            let life = nextLife
            nextLife += 1
            kidLife = life
            kidLast = value
            kidRunning = start(feedback: 6, value: value, life: life)
        case (let life?, nil):
            // The child goes: what it runs is cancelled, and its life ends, silencing the events
            // of its effects still queued, finished ones' included.
            if let running = kidRunning { cancel(running) }
            endedLives.insert(life)
            lifeEndedAt[life] = replayed
            kidLife = nil
            kidLast = nil
            kidRunning = nil
        case (let life?, let value?):
            if value != kidLast {
                kidLast = value
                if let running = kidRunning { kidRunning = nil; cancel(running) }
                kidRunning = start(feedback: 6, value: value, life: life)
            }
        case (nil, nil):
            break
        }
    }

    /// Starts an effect (of the kid's life `life`, for the kid's); its key if there is something
    /// to cancel later.
    private mutating func start(feedback: Int, value: Int, life: Int? = nil) -> EffectKey? {
        let partial = EffectKey.Partial(feedback: feedback, value: value)
        let generation = generations[partial, default: 0]
        generations[partial] = generation + 1
        let kind = ModelSystem.kind(feedback: feedback, value: value)
        let key = EffectKey(feedback: feedback, value: value, generation: generation)
        switch kind {
        case .none:
            return nil
        case .send:
            statistics.effectsStarted += 1
            statistics.effectsFinished += 1
            effects[key] = EffectRecord(kind: .send, status: .finished, taskAlive: false, life: [.started, .finished])
            for event in ModelSystem.sentEvents(feedback: feedback, value: value) { queue.append((event, nil, life)) }
            return nil
        case .run, .callback:
            if let life { lifeOf[key] = life }
            statistics.effectsStarted += 1
            effects[key] = EffectRecord(kind: kind, status: .running, taskAlive: kind == .run, life: [.started])
            return key
        }
    }

    /// Concurrent mode: how many transitions had been replayed when each effect was cancelled.
    private(set) var cancelledAt: [EffectKey: Int] = [:]
    private var replayed = 0

    private mutating func cancel(_ key: EffectKey) {
        guard effects[key]?.status == .running else { return }
        cancelledAt[key] = replayed
        effects[key]?.status = .cancelled
        effects[key]?.life.append(.cancelled)
        statistics.effectsCancelled += 1
    }
}
