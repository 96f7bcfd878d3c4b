@testable import FeedbackLoop
import Foundation
import Logging

/// Concurrent mode: several threads send at once with no waits, effects drive themselves, an
/// observer joins mid-run, a task calls `sendAndWait`, and the loop may be stopped in the middle.
/// Nothing can be compared step by step; instead the observed run is checked against the model:
/// - the transition log is one contiguous chain of the reducer's own steps;
/// - each sender's events that were reduced are a prefix of what it sent, in order;
/// - every event sent was reduced or dropped exactly once, for a reason the model allows;
/// - the effects started and cancelled are exactly the model's decisions over the observed states;
/// - every observer saw a contiguous run of the states, and each `sendAndWait` its own;
/// - the statistics add up.
struct ConcurrentRun {
    typealias State = ModelSystem.State
    typealias Event = ModelSystem.Event

    var initial: State
    var senders: [[ModelSystem.Op]]
    /// After how many events of sender 0 the loop is stopped, if at all.
    var stopAfter: Int?

    static func random(using rng: inout SplitMix64) -> ConcurrentRun {
        var initial = Script.random(using: &rng, maxSteps: 1).initial
        initial.history = []
        let senders = (0..<4).map { _ in (0..<(1 + rng.int(300))).map { _ in Script.randomOp(using: &rng) } }
        return ConcurrentRun(initial: initial, senders: senders, stopAfter: rng.chance(0.3) ? rng.int(senders[0].count) : nil)
    }

    static func tag(sender: Int, sequence: Int) -> Int { sender * 1_000_000 + sequence }

    /// Plays the run on `backend`; the first violation found, or `nil`.
    func firstViolation(backend: Backend) async -> String? {
        let transitions = Locked<[(before: State, event: Event, after: State)]>([])
        let drops = Locked<[Event: [DropReason]]>([:])
        let generations = Locked<[EffectKey.Partial: Int]>([:])
        let pendingKey = Locked<EffectKey?>(nil)
        let keysByID = Locked<[UInt64: EffectKey]>([:])
        let outcomes = Locked<[EffectKey: [ReferenceModel.Life]]>([:])
        let effectEvents = Locked<[Event: EffectKey]>([:])
        let nextEffectTag = Locked(0)
        let instrumentation = LoopInstrumentation<State, Event>(
            onTransition: { before, event, after in transitions.append((before, event, after)) },
            onEffect: { event in
                if case .started = event.kind, let key = pendingKey.withLock({ $0.take() }) {
                    keysByID.withLock { $0[event.effect] = key }
                }
                if let key = keysByID.withLock({ $0[event.effect] }) {
                    outcomes.withLock { $0[key, default: []].append(ReferenceModel.Life(event.kind)) }
                }
            },
            onDrop: { event, reason in drops.withLock { $0[event, default: []].append(reason) } })
        let loop = Loop(
            initial: initial,
            reduce: ModelSystem.reduce,
            feedbacks: ModelSystem.feedbacks { partial in
                let generation = generations.withLock { generations in
                    defer { generations[partial, default: 0] += 1 }
                    return generations[partial, default: 0]
                }
                let key = EffectKey(feedback: partial.feedback, value: partial.value, generation: generation)
                pendingKey.withLock { $0 = key }
                // Effects of every feedback but lensing (which restarts on every state) send one
                // event, so that effects feed the loop without feeding themselves forever.
                let speaks = partial.feedback != 1
                @Sendable func word() -> Event {
                    let tag = -1_000_000 - nextEffectTag.increment()
                    let event = Event(op: .noop, tag: tag)
                    effectEvents.withLock { $0[event] = key }
                    return event
                }
                switch ModelSystem.kind(feedback: partial.feedback, value: partial.value) {
                case .none:
                    return .none
                case .send:
                    return .send(contentsOf: ModelSystem.sentEvents(feedback: partial.feedback, value: partial.value))
                case .run:
                    return .run { sink in
                        guard speaks else { return await suspendUntilCancelled() }
                        if generation.isMultiple(of: 2) { sink.send(word()) } else { sink.finish(sending: word()) }
                    }
                case .callback:
                    return .callback { sink in
                        guard speaks else { return .none }
                        sink.send(word())
                        sink.finish()
                        return .none
                    }
                }
            },
            backend: backend,
            configuration: LoopConfiguration(logger: quietLogger, onEffectError: { _ in }),
            instrumentation: instrumentation)

        // An observer from the start, one that joins midway, a task that calls sendAndWait.
        let fromStart = Locked<[State]>([])
        let early = loop.observe { fromStart.append($0) }
        let midway = Locked<[State]>([])
        let answers = Locked<[(Event, State)]>([])
        let asker = Task {
            for sequence in 0..<50 {
                let event = Event(op: .noop, tag: Self.tag(sender: 9, sequence: sequence))
                guard let state = try? await loop.sendAndWait(event) else { return }
                answers.append((event, state))
            }
        }
        let joined = Locked<Observation?>(nil)
        let senders = self.senders
        let stopAfter = self.stopAfter
        let stopping = Locked<Task<Void, Never>?>(nil)
        await onThreads(senders.count) { sender in
            for (sequence, op) in senders[sender].enumerated() {
                if sender == 0 && sequence == stopAfter {
                    stopping.withLock { $0 = Task { await loop.stop() } }
                }
                if sender == 1 && sequence == senders[1].count / 2 {
                    joined.withLock { $0 = loop.observe { midway.append($0) } }
                }
                loop.send(Event(op: op, tag: Self.tag(sender: sender, sequence: sequence)))
            }
        }
        await asker.value
        await stopping.current?.value
        // Everything the senders sent is handled before the run ends (the loop never becomes
        // idle by itself: lensing's effects run until cancelled).
        await loop.barrier()
        await loop.stop()
        early.cancel()
        joined.current?.cancel()

        // The transition log is one chain of reducer steps from the initial state.
        let log = transitions.current
        var expected = initial
        for (index, step) in log.enumerated() {
            if step.before != expected { return "transition \(index) starts from \(step.before), not from \(expected)" }
            ModelSystem.reduce(&expected, step.event)
            if step.after != expected { return "transition \(index) (\(step.event)) gave \(step.after), the reducer \(expected)" }
        }
        if loop.state != expected { return "the final state is \(loop.state), the log ends at \(expected)" }

        // Each sender's reduced events are a prefix of what it sent, in order; each event once.
        // (`.send` effects' events, tags -700 to -1, carry no identity of their own and may repeat.)
        func isUnique(_ event: Event) -> Bool { event.tag >= 0 || event.tag <= -1_000_000 }
        let reduced = log.map(\.event)
        let uniques = reduced.filter(isUnique)
        if Set(uniques).count != uniques.count { return "an event was reduced twice" }
        let dropped = drops.current
        for (event, reasons) in dropped where reasons.count > 1 && isUnique(event) {
            return "\(event) was dropped \(reasons.count) times: \(reasons)"
        }
        for event in dropped.keys where isUnique(event) && Set(uniques).contains(event) {
            return "\(event) was both reduced and dropped"
        }
        for sender in senders.indices {
            let mine = reduced.filter { $0.tag >= 0 && $0.tag / 1_000_000 == sender }.map { $0.tag % 1_000_000 }
            if mine != Array(0..<mine.count) { return "sender \(sender)'s reduced events are not a prefix in order: \(mine.prefix(20))…" }
            for sequence in mine.count..<senders[sender].count {
                let event = Event(op: senders[sender][sequence], tag: Self.tag(sender: sender, sequence: sequence))
                guard let reasons = dropped[event] else { return "\(event) was neither reduced nor dropped" }
                if stopAfter == nil { return "\(event) was dropped (\(reasons)) though nothing stopped the loop" }
                if !reasons.allSatisfy({ $0 == .afterStop || $0 == .discardedAtStop }) { return "\(event) was dropped for \(reasons)" }
            }
        }
        let reducedSet = Set(reduced)
        for (event, key) in effectEvents.current {
            if reducedSet.contains(event) { continue }
            guard let reasons = dropped[event] else { return "\(key)'s event \(event) was neither reduced nor dropped" }
            if reasons.contains(.overCapacity) { return "\(key)'s event was refused for capacity" }
        }

        // The effects started and cancelled are the model's decisions over the observed states.
        var model = ReferenceModel(initial: initial, replaying: true)
        for step in log { model.replay(after: step.after, event: step.event) }
        model.stop()  // the run always ends stopped
        // No event of a cancelled effect is reduced after the step that cancelled it. (An effect
        // that finished first keeps its events: the model's later decision to cancel it found it
        // ended.)
        let sentBy = effectEvents.current
        let ended = outcomes.current
        for (index, step) in log.enumerated() {
            guard let key = sentBy[step.event], ended[key]?.last == .cancelled,
                let cancelled = model.cancelledAt[key]
            else { continue }
            if index >= cancelled {
                return "\(key)'s event was reduced at transition \(index), after the effect was cancelled at \(cancelled - 1)"
            }
        }
        // No event of the kid's effects is reduced after the step that ended the kid's life, even
        // from an effect that had finished.
        for (index, step) in log.enumerated() {
            guard let key = sentBy[step.event], let life = model.lifeOf[key], let ended = model.lifeEndedAt[life] else { continue }
            if index >= ended {
                return "\(key)'s event was reduced at transition \(index), after its child's life ended at \(ended - 1)"
            }
        }
        let lives = outcomes.current
        let modelKeys = Set(model.effects.keys)
        if Set(lives.keys) != modelKeys {
            return "effects started \(Set(lives.keys).subtracting(modelKeys).sorted()) beyond the model's, missing \(modelKeys.subtracting(lives.keys).sorted())"
        }
        for (key, life) in lives {
            let ends = life.dropFirst()
            if life.first != .started || ends.count > 1 { return "\(key) lived \(life)" }
            if ends.first == .cancelled, model.effects[key]?.status != .cancelled { return "\(key) was cancelled though the model never decided so" }
            if ends.isEmpty { return "\(key) never ended" }
        }

        // Observers saw every state from the one current when they joined to the last, in order.
        let states = [initial] + log.map(\.after)
        for (name, seen) in [("the first", fromStart.current), ("the midway", midway.current)] {
            guard let first = seen.first else { continue }
            guard let start = states.firstIndex(of: first), Array(states[start...]) == seen else {
                return "\(name) observer's \(seen.count) states are not every state from its first on"
            }
        }
        for (event, state) in answers.current where state.history.last != event {
            return "sendAndWait(\(event)) answered a state whose last event is \(state.history.last.map(\.description) ?? "none")"
        }

        // The statistics add up.
        let statistics = loop.statistics
        if statistics.eventsReduced != log.count { return "eventsReduced \(statistics.eventsReduced), the log has \(log.count)" }
        let reasons = dropped.values.flatMap { $0 }
        for reason in DropReason.allCases {
            let counted = switch reason {
            case .afterStop: statistics.eventsDroppedAfterStop
            case .overCapacity: statistics.eventsDroppedOverCapacity
            case .fromCancelledEffect: statistics.eventsDroppedFromCancelledEffects
            case .discardedAtStop: statistics.eventsDiscardedAtStop
            case .cancelledWhileWaiting: statistics.eventsCancelledWhileWaiting
            }
            let reported = reasons.count { $0 == reason }
            if counted != reported { return "\(reason): counted \(counted), reported \(reported)" }
        }
        if statistics.effectsStarted != lives.count { return "effectsStarted \(statistics.effectsStarted), \(lives.count) seen starting" }
        if statistics.effectsStarted != statistics.effectsFinished + statistics.effectsCancelled + statistics.effectsFailed + statistics.effectsRunning {
            return "effects do not add up: \(statistics)"
        }
        if statistics.effectsRunning != 0 { return "\(statistics.effectsRunning) effects still running after stop" }
        return nil
    }
}
