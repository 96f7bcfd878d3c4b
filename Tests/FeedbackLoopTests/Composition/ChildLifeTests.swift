import FeedbackLoop
import Testing

/// A child that goes away and comes back under the same id is a new child: nothing its previous
/// life sent — a running effect's late event, a finished effect's last word still queued, a
/// `.send` effect's events — reaches it. Each case holds the drain so that the queue holds
/// exactly the order that used to leak: the removal, the child added back, then the old life's
/// event.
@Suite("Composition: a child's events belong to the life that sent them")
struct ChildLifeTests {
    func makeLoop(_ backend: Backend, _ effects: Kid.Effects) -> Loop<Family.State, Family.Event> {
        Loop(initial: Family.State(), reduce: Family.reduce, feedbacks: Family.feedbacks(effects), backend: backend)
    }

    @Test(arguments: Backend.allCases)
    func aKeyedChildAddedBackDoesNotReduceItsPredecessorsFinishedAnswer(backend: Backend) async throws {
        let effects = Kid.Effects()
        let loop = makeLoop(backend, effects)
        let seven = Kid.State(name: "seven", query: 1)
        try await loop.sendAndWait(.adopt(7, seven))
        let old = try #require(effects["seven#1"])

        try await withDrainHeld(loop, by: .eldest(.add(1)), at: { $0.eldest.count == 1 }) { release in
            loop.send(.release(7))
            loop.send(.adopt(7, seven))
            old.finish(sending: .add(5))  // finished, not cancelled: the life it belongs to ends first
            release.open()
        }
        try await loop.sendAndWait(.eldest(.add(0)))  // after everything queued before it, published

        #expect(loop.state.kids[id: 7]?.count == 0, "the new child 7 reduced its predecessor's answer")
        #expect(loop.statistics.eventsDroppedFromCancelledEffects == 1)
        #expect(effects.probe.started("seven#1") == 2, "the child added back started afresh")
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func anOptionalChildSetBackDoesNotReduceItsPredecessorsFinishedAnswer(backend: Backend) async throws {
        let effects = Kid.Effects()
        let loop = makeLoop(backend, effects)
        let guest = Kid.State(name: "guest", query: 1)
        try await loop.sendAndWait(.setGuest(guest))
        let old = try #require(effects["guest#1"])

        try await withDrainHeld(loop, by: .eldest(.add(1)), at: { $0.eldest.count == 1 }) { release in
            loop.send(.setGuest(nil))
            loop.send(.setGuest(guest))
            old.finish(sending: .add(5))
            release.open()
        }
        try await loop.sendAndWait(.eldest(.add(0)))  // after everything queued before it, published

        #expect(loop.state.guest?.count == 0, "the guest set back reduced its predecessor's answer")
        #expect(loop.statistics.eventsDroppedFromCancelledEffects == 1)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func aSendEffectOfARemovedKeyedChildDoesNotReachTheChildAddedBack(backend: Backend) async throws {
        let loop = Loop(initial: Greeters.State(), reduce: Greeters.reduce, feedbacks: Greeters.feedbacks, backend: backend)
        try await withDrainHeld(loop, by: .tick, at: { $0.ticks == 1 }) { release in
            loop.send(.add(8))     // appears, and greets itself with a `.send` effect queued behind…
            loop.send(.remove(8))  // …its removal,
            loop.send(.add(8))     // and the new child 8, which greets itself too
            release.open()
        }
        await loop.waitUntilIdle()  // every greeting reduced, the state published

        #expect(loop.state.keyed[id: 8]?.hellos == 1, "the first child 8's greeting reached the second")
        #expect(loop.statistics.eventsDroppedFromCancelledEffects == 1)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func aSendEffectOfAnOptionalChildSetToNilDoesNotReachTheChildSetBack(backend: Backend) async throws {
        let loop = Loop(initial: Greeters.State(), reduce: Greeters.reduce, feedbacks: Greeters.feedbacks, backend: backend)
        try await withDrainHeld(loop, by: .tick, at: { $0.ticks == 1 }) { release in
            loop.send(.setSingle(true))
            loop.send(.setSingle(false))
            loop.send(.setSingle(true))
            release.open()
        }
        await loop.waitUntilIdle()  // every greeting reduced, the state published

        #expect(loop.state.single?.hellos == 1, "the first child's greeting reached the second")
        #expect(loop.statistics.eventsDroppedFromCancelledEffects == 1)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func aGrandchildsFinishedAnswerEndsWithTheChildItLivesIn(backend: Backend) async throws {
        let loop = Loop(initial: Greeters.State(), reduce: Greeters.reduce, feedbacks: Greeters.feedbacks, backend: backend)
        try await loop.sendAndWait(.add(3))
        try await withDrainHeld(loop, by: .tick, at: { $0.ticks == 1 }) { release in
            // Child 3's grandchild greets (a `.send` at its appearance) when told to: queued
            // behind child 3's removal and return, it belongs to a life that has ended.
            loop.send(.keyed(3, .nest))
            loop.send(.remove(3))
            loop.send(.add(3))
            release.open()
        }
        await loop.waitUntilIdle()  // every greeting reduced, the state published

        #expect(loop.state.keyed[id: 3]?.nestHellos == 0, "the grandchild of the first child 3 reached the second")
        await loop.stop()
    }
}

/// Children that greet themselves as they appear, with a `.send` effect: keyed, optional, and
/// one level further down.
enum Greeters {
    struct Child: Equatable, Sendable {
        var hellos = 0
        var nest: Bool? = nil
        var nestHellos = 0
    }

    enum ChildEvent: Equatable, Sendable {
        case hello
        case nest
        case nestHello
    }

    struct State: Equatable, Sendable {
        var ticks = 0
        var keyed = IdentifiedStates<Int, Child>()
        var single: Child?
    }

    enum Event: Equatable, Sendable {
        case tick
        case add(Int)
        case remove(Int)
        case setSingle(Bool)
        case keyed(Int, ChildEvent)
        case single(ChildEvent)
    }

    static let keyed = KeyedChildScope(
        state: \State.keyed,
        embed: Event.keyed,
        extract: { if case .keyed(let id, let event) = $0 { (id, event) } else { nil } })

    static let single = ChildScope(
        state: StatePath(\State.single),
        event: EventPath(embed: Event.single, extract: { if case .single(let event) = $0 { event } else { nil } }))

    static let nested = ChildScope(
        state: StatePath(\Child.nest),
        event: EventPath(embed: { (_: Int) in ChildEvent.nestHello }, extract: { _ in nil }))

    @Sendable
    static func reduceChild(_ child: inout Child, _ event: ChildEvent) {
        switch event {
        case .hello: child.hellos += 1
        case .nest: child.nest = true
        case .nestHello: child.nestHellos += 1
        }
    }

    @Sendable
    static func reduce(_ state: inout State, _ event: Event) {
        keyed.reduce(&state, event, with: reduceChild)
        single.reduce(&state, event, with: reduceChild)
        switch event {
        case .tick: state.ticks += 1
        case .add(let id): state.keyed[id: id] = Child()
        case .remove(let id): state.keyed[id: id] = nil
        case .setSingle(let present): state.single = present ? Child() : nil
        case .keyed, .single: break
        }
    }

    static var childFeedbacks: [Feedback<Child, ChildEvent>] {
        [
            .skippingRepeated({ $0.hellos == 0 ? true : nil }) { _ in .send(.hello) },
            nested.feedback([.skippingRepeated({ _ in true }) { _ in .send(1) }]),
        ]
    }

    static var feedbacks: [Feedback<State, Event>] {
        [keyed.feedback(childFeedbacks), single.feedback(childFeedbacks)]
    }
}
