@testable import FeedbackLoop
import Foundation
import Logging

/// Plays a ``Script`` on a real loop, one step at a time, waiting after each for quiescence (the
/// queue drained, no drain under way, every effect's work the model expects ended), and compares
/// everything observable with the ``ReferenceModel``: the state, every statistics counter, each
/// effect's life, every dropped event and its reason, every observer's sequence of states and
/// every `sendAndWait` answer. Returns the first difference, or `nil`.
final class DeterministicHarness: Sendable {
    typealias State = ModelSystem.State
    typealias Event = ModelSystem.Event

    /// The test's handle on one commandable effect.
    final class Controller: Sendable {
        let key: EffectKey
        let kind: ModelSystem.Kind
        private let mailbox = Locked<Mailbox>(Mailbox())

        private struct Mailbox {
            var sink: Sink<Event>?
            var commands: [(Script.Command, CheckedContinuation<Void, Never>)] = []
            var waiter: CheckedContinuation<(Script.Command, CheckedContinuation<Void, Never>), Never>?
            var returned = false
        }

        init(key: EffectKey, kind: ModelSystem.Kind) {
            self.key = key
            self.kind = kind
        }

        var sink: Sink<Event>? { mailbox.withLock { $0.sink } }

        func attach(_ sink: Sink<Event>) { mailbox.withLock { $0.sink = sink } }

        /// A `.run` effect's body: obeys commands until told to return. It ignores cancellation
        /// on purpose, so that the script can make a cancelled effect send.
        func body(_ sink: Sink<Event>) async throws {
            attach(sink)
            defer {
                // Commands posted after the body returned find nobody: answer them here.
                let late = mailbox.withLock { state in
                    state.returned = true
                    defer { state.commands = [] }
                    return state.commands
                }
                for (_, done) in late { done.resume() }
            }
            while true {
                let (command, done) = await next()
                switch command {
                case .send(let op):
                    sink.send(Event(op: op, tag: -1))
                    done.resume()
                case .finish:
                    done.resume()
                    return
                case .finishSending(let op):
                    sink.finish(sending: Event(op: op, tag: -1))
                    done.resume()
                    return
                case .fail:
                    done.resume()
                    throw ModelEffectFailure()
                }
            }
        }

        private func next() async -> (Script.Command, CheckedContinuation<Void, Never>) {
            await withCheckedContinuation { continuation in
                let ready = mailbox.withLock { state -> (Script.Command, CheckedContinuation<Void, Never>)? in
                    if state.commands.isEmpty {
                        state.waiter = continuation
                        return nil
                    }
                    return state.commands.removeFirst()
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }

        /// Hands a command to the `.run` body and returns once it has been carried out.
        func post(_ command: Script.Command) async {
            await withCheckedContinuation { done in
                enum Delivery {
                    case toWaiter(CheckedContinuation<(Script.Command, CheckedContinuation<Void, Never>), Never>)
                    case queued
                    case returned
                }
                let delivery = mailbox.withLock { state -> Delivery in
                    if state.returned { return .returned }
                    if let waiter = state.waiter {
                        state.waiter = nil
                        return .toWaiter(waiter)
                    }
                    state.commands.append((command, done))
                    return .queued
                }
                switch delivery {
                case .toWaiter(let waiter): waiter.resume(returning: (command, done))
                case .queued: break
                case .returned: done.resume()
                }
            }
        }
    }

    struct ModelEffectFailure: Error {}

    let loop: Loop<State, Event>
    private let controllers = Locked<[EffectKey: Controller]>([:])
    private let generations = Locked<[EffectKey.Partial: Int]>([:])
    private let pendingKey = Locked<EffectKey?>(nil)
    private let keysByID = Locked<[UInt64: EffectKey]>([:])
    private let lives = Locked<[EffectKey: [ReferenceModel.Life]]>([:])
    private let drops = Locked<[ReferenceModel.DropRecord]>([])
    private let observed = Locked<[Int: [State]]>([:])

    init(initial: State, backend: Backend) {
        let controllers = self.controllers
        let generations = self.generations
        let pendingKey = self.pendingKey
        let keysByID = self.keysByID
        let lives = self.lives
        let drops = self.drops
        let instrumentation = LoopInstrumentation<State, Event>(
            onEffect: { event in
                if case .started = event.kind, let key = pendingKey.withLock({ $0.take() }) {
                    keysByID.withLock { $0[event.effect] = key }
                }
                if let key = keysByID.withLock({ $0[event.effect] }) {
                    lives.withLock { $0[key, default: []].append(ReferenceModel.Life(event.kind)) }
                }
            },
            onDrop: { event, reason in drops.append(ReferenceModel.DropRecord(event: event, reason: reason)) })
        loop = Loop(
            initial: initial,
            reduce: ModelSystem.reduce,
            feedbacks: ModelSystem.feedbacks { partial in
                let generation = generations.withLock { $0[partial, default: 0] }
                generations.withLock { $0[partial] = generation + 1 }
                let key = EffectKey(feedback: partial.feedback, value: partial.value, generation: generation)
                let kind = ModelSystem.kind(feedback: partial.feedback, value: partial.value)
                pendingKey.withLock { $0 = key }
                switch kind {
                case .none:
                    return .none
                case .send:
                    return .send(contentsOf: ModelSystem.sentEvents(feedback: partial.feedback, value: partial.value))
                case .run:
                    let controller = Controller(key: key, kind: .run)
                    controllers.withLock { $0[key] = controller }
                    return .run { sink in try await controller.body(sink) }
                case .callback:
                    let controller = Controller(key: key, kind: .callback)
                    controllers.withLock { $0[key] = controller }
                    return .callback { sink in
                        controller.attach(sink)
                        return .none
                    }
                }
            },
            backend: backend,
            configuration: LoopConfiguration(logger: quietLogger, onEffectError: { _ in }),
            instrumentation: instrumentation)
    }

    /// Waits until the loop is quiet and its registry holds exactly `effects` entries: woken by
    /// the loop's own progress, never by polling. (The whole script runs under a deadline.)
    func quiesce(effects: Int) async -> String? {
        await loop.engine.waitUntil { state in
            // A stopped loop keeps the drain role for good: nothing is reduced any more.
            state.effects.count == effects
                && (state.phase == .stopped || (state.phase == .idle && state.intake.items.isEmpty))
        }
        return nil
    }

    /// Waits until the loop has torn down (every running effect cancelled).
    func waitForTeardown() async {
        await loop.engine.waitUntil { $0.phase == .tornDown || $0.phase == .stopped }
    }

    /// Plays `script` against the model; the first difference, or `nil`.
    static func firstDifference(_ script: Script, backend: Backend) async -> String? {
        let harness = DeterministicHarness(initial: script.initial, backend: backend)
        let difference = await harness.play(script)
        await harness.tearDown()
        return difference
    }

    /// Stops the loop and lets every effect's task return, so that nothing outlives the script.
    private func tearDown() async {
        let stopping = Task { await loop.stop() }
        await waitForTeardown()
        for controller in controllers.withLock({ Array($0.values) }) where controller.kind == .run {
            await controller.post(.finish)
        }
        await stopping.value
    }

    private func play(_ script: Script) async -> String? {
        let harness = self
        var model = ReferenceModel(initial: script.initial)
        var observations: [Int: Observation] = [:]
        var nextObserver = 0
        if let failure = await harness.quiesce(effects: model.registryCount) { return "at start: \(failure)" }
        if let difference = harness.compare(with: model) { return "at start: \(difference)" }
        for (index, step) in script.steps.enumerated() {
            let tag = index + 1
            switch step {
            case .send(let op):
                model.send(Event(op: op, tag: tag))
                harness.loop.send(Event(op: op, tag: tag))
            case .sendAndWait(let op):
                let expected = model.sendAndWait(Event(op: op, tag: tag))
                let actual = try? await harness.loop.sendAndWait(Event(op: op, tag: tag))
                if actual != expected {
                    return "step \(index) (\(step)): sendAndWait answered \(actual.map(\.description) ?? "stopped"), the model \(expected.map(\.description) ?? "stopped")"
                }
            case .effect(let pick, let command):
                let keys = model.controlledKeys
                guard !keys.isEmpty else { continue }
                let key = keys[pick % keys.count]
                guard model.canAct(key), let controller = harness.controllers.withLock({ $0[key] }) else { continue }
                switch command {
                case .send(let op):
                    model.effectSends(key, Event(op: op, tag: -1))
                case .finish:
                    model.effectFinishes(key, sending: nil)
                case .finishSending(let op):
                    model.effectFinishes(key, sending: Event(op: op, tag: -1))
                case .fail:
                    if controller.kind == .run { model.effectFails(key) }
                }
                if controller.kind == .run {
                    await controller.post(command)
                } else {
                    guard let sink = controller.sink else { return "step \(index): callback effect \(key) has no sink" }
                    switch command {
                    case .send(let op): sink.send(Event(op: op, tag: -1))
                    case .finish: sink.finish()
                    case .finishSending(let op): sink.finish(sending: Event(op: op, tag: -1))
                    case .fail: break
                    }
                }
            case .addObserver:
                let id = nextObserver
                nextObserver += 1
                model.addObserver(id)
                let observed = harness.observed
                observed.withLock { $0[id] = [] }
                observations[id] = harness.loop.observe { state in observed.withLock { $0[id, default: []].append(state) } }
            case .removeObserver(let pick):
                let ids = observations.keys.sorted()
                guard !ids.isEmpty else { continue }
                let id = ids[pick % ids.count]
                let expected = model.removeObserver(id)
                observations.removeValue(forKey: id)?.cancel()
                if let failure = await harness.quiesce(effects: model.registryCount) { return "step \(index) (\(step)): \(failure)" }
                let actual = harness.observed.withLock { $0.removeValue(forKey: id) }
                if let expected, actual != expected {
                    return "step \(index) (\(step)): observer \(id) saw \(actual?.count ?? 0) states, the model \(expected.count)"
                }
            case .stop:
                let stopping = Task { await harness.loop.stop() }
                // The test's `.run` effects ignore cancellation: once the loop has cancelled them,
                // tell each live one to return, as a well-behaved effect would.
                let live = model.controlledKeys.filter { model.canAct($0) && model.effects[$0]?.kind == .run }
                model.stop()
                await harness.waitForTeardown()
                for key in live { await harness.controllers.withLock { $0[key] }?.post(.finish) }
                await stopping.value
            }
            if let failure = await harness.quiesce(effects: model.registryCount) { return "step \(index) (\(step)): \(failure)" }
            if let difference = harness.compare(with: model) { return "after step \(index) (\(step)): \(difference)" }
        }
        return nil
    }

    private func compare(with model: ReferenceModel) -> String? {
        let state = loop.state
        if state != model.state { return "state \(state), the model \(model.state)" }
        let statistics = loop.statistics
        if statistics != model.expectedStatistics { return "statistics \(statistics), the model \(model.expectedStatistics)" }
        let lives = self.lives.current
        for (key, effect) in model.effects where lives[key] != effect.life {
            return "effect \(key): \(lives[key] ?? []), the model \(effect.life)"
        }
        if lives.count != model.effects.count { return "effects \(lives.keys.sorted()), the model \(model.effects.keys.sorted())" }
        let drops = self.drops.current
        if drops != model.drops { return "drops \(drops), the model \(model.drops)" }
        let observed = self.observed.current
        for (id, expected) in model.observers where observed[id] != expected {
            return "observer \(id) saw \(observed[id]?.count ?? 0) states, the model \(expected.count)"
        }
        return nil
    }
}
