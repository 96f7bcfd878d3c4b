import FeedbackLoop
import Testing

/// A child feature lifted into a parent keeps every guarantee of a loop of its own, and its
/// effects end with it.
@Suite("Composition: children inside a parent")
struct CompositionTests {
    func makeLoop(_ backend: Backend, _ effects: Kid.Effects, initial: Family.State = Family.State()) -> Loop<Family.State, Family.Event> {
        Loop(initial: initial, reduce: Family.reduce, feedbacks: Family.feedbacks(effects), backend: backend)
    }

    @Test(arguments: Backend.allCases)
    func aLiftedChildSeesItsStateAndSendsParentEvents(backend: Backend) async throws {
        let effects = Kid.Effects()
        let loop = makeLoop(backend, effects)
        try await loop.sendAndWait(.eldest(.setQuery(1)))
        #expect(effects.probe.entries == [.started("eldest#1")])

        let sink = try #require(effects["eldest#1"])
        sink(.add(5))
        await loop.barrier()
        #expect(loop.state.eldest.count == 5, "the child's event came back as the parent's and reached the child")

        try await loop.sendAndWait(.eldest(.setQuery(2)))
        #expect(effects.probe.entries == [.started("eldest#1"), .cancelled("eldest#1"), .started("eldest#2")])
        sink(.add(100))
        await loop.barrier()
        #expect(loop.state.eldest.count == 5, "a cancelled child effect cannot change state")
        #expect(loop.statistics.eventsDroppedFromCancelledEffects == 1)
        await loop.stop()
        #expect(effects.probe.cancelled("eldest#2") == 1, "stop ends a child's effects like any other")
    }

    @Test(arguments: Backend.allCases)
    func removingAnOptionalChildCancelsItsEffectsAndDropsItsLateEvents(backend: Backend) async throws {
        let effects = Kid.Effects()
        let loop = makeLoop(backend, effects)
        try await loop.sendAndWait(.setGuest(Kid.State(name: "guest", query: 1, grandchild: Kid.Leaf(query: 9))))
        #expect(effects.probe.entries == [.started("guest#1"), .started("leaf#9")])
        let sink = try #require(effects["guest#1"])

        try await loop.sendAndWait(.setGuest(nil))
        #expect(Set(effects.probe.entries.suffix(2)) == [.cancelled("guest#1"), .cancelled("leaf#9")],
                "every effect of the child, its own child's too, ends with it")
        sink(.add(1))
        await loop.barrier()
        #expect(loop.state.guest == nil)
        #expect(loop.statistics.eventsDroppedFromCancelledEffects == 1)

        try await loop.sendAndWait(.setGuest(Kid.State(name: "guest", query: 1)))
        #expect(effects.probe.started("guest#1") == 2, "a child that comes back starts fresh")
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func aChildInAnEnumCaseLivesAsLongAsTheCase(backend: Backend) async throws {
        let effects = Kid.Effects()
        let loop = makeLoop(backend, effects)
        try await loop.sendAndWait(.setRoom(.hall(Kid.State(name: "hall", query: 3))))
        try await loop.sendAndWait(.hall(.add(2)))
        #expect(loop.state.room == .hall(Kid.State(name: "hall", query: 3, count: 2)))
        try await loop.sendAndWait(.setRoom(.garden))
        #expect(effects.probe.entries == [.started("hall#3"), .cancelled("hall#3")])
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func removingAKeyedChildCancelsOnlyItsEffects(backend: Backend) async throws {
        let effects = Kid.Effects()
        let loop = makeLoop(backend, effects)
        try await loop.sendAndWait(.adopt(1, Kid.State(name: "one", query: 1)))
        try await loop.sendAndWait(.adopt(2, Kid.State(name: "two", query: 1)))
        let one = try #require(effects["one#1"])
        let two = try #require(effects["two#1"])

        try await loop.sendAndWait(.release(1))
        #expect(effects.probe.entries == [.started("one#1"), .started("two#1"), .cancelled("one#1")])
        one(.add(10))
        two(.add(1))
        await loop.barrier()
        #expect(loop.state.kids.ids == [2])
        #expect(loop.state.kids[id: 2]?.count == 1)
        #expect(loop.statistics.eventsDroppedFromCancelledEffects == 1)
        #expect(loop.statistics.eventsOrphaned == 0, "a cancelled effect's event is dropped before any child could see it")
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func twoKeyedChildrenWithTheSameQueryRunIndependentEffects(backend: Backend) async throws {
        let effects = Kid.Effects()
        let loop = makeLoop(backend, effects)
        // Same name, same query: the effect keys collide on purpose.
        try await loop.sendAndWait(.adopt(1, Kid.State(name: "twin", query: 7)))
        let first = try #require(effects["twin#7"])
        try await loop.sendAndWait(.adopt(2, Kid.State(name: "twin", query: 7)))
        let second = try #require(effects["twin#7"])
        #expect(effects.probe.started("twin#7") == 2)

        first(.add(1))
        second(.add(20))
        await loop.barrier()
        #expect(loop.state.kids[id: 1]?.count == 1)
        #expect(loop.state.kids[id: 2]?.count == 20)

        try await loop.sendAndWait(.kid(2, .setQuery(nil)))
        #expect(effects.probe.cancelled("twin#7") == 1)
        first(.add(1))
        await loop.barrier()
        #expect(loop.state.kids[id: 1]?.count == 2, "the twin's cancellation did not touch this one")
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func onlyTheKeyedChildThatChangedIsLookedAt(backend: Backend) async throws {
        let effects = Kid.Effects()
        var initial = Family.State()
        for id in 0..<200 { initial.kids[id: id] = Kid.State(name: "k\(id)") }
        let loop = makeLoop(backend, effects, initial: initial)
        await loop.barrier()
        let base = effects.queried.current   // every kid (and the others) once at the start
        #expect(base == 201, "the eldest and the two hundred kids, once each")

        try await loop.sendAndWait(.kid(7, .setQuery(1)))
        #expect(effects.queried.current - base == 1, "one kid's query evaluated, not two hundred")
        try await loop.sendAndWait(.overrule(150, 4))
        #expect(effects.queried.current - base == 2, "a change the parent made counts too")
        #expect(effects.probe.entries == [.started("k7#1"), .started("k150#4")])
        try await loop.sendAndWait(.eldest(.add(1)))
        #expect(effects.queried.current - base == 3, "an event for the eldest looks at the eldest only, at no kid")
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func aParentChangingTheChildsStateIsSeenByTheChild(backend: Backend) async throws {
        let effects = Kid.Effects()
        let loop = makeLoop(backend, effects)
        try await loop.sendAndWait(.adopt(1, Kid.State(name: "one")))
        try await loop.sendAndWait(.overrule(1, 5))
        try await loop.sendAndWait(.overrule(1, nil))
        #expect(effects.probe.entries == [.started("one#5"), .cancelled("one#5")])
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func puttingBackAnOlderCopyEndsTheChildrenItDoesNotHave(backend: Backend) async throws {
        let effects = Kid.Effects()
        let loop = makeLoop(backend, effects)
        try await loop.sendAndWait(.adopt(1, Kid.State(name: "one", query: 1)))
        let before = loop.state.kids
        for id in 2...40 { try await loop.sendAndWait(.adopt(id, Kid.State(name: "k\(id)", query: 1))) }
        try await loop.sendAndWait(.restore(before))
        #expect(effects.probe.cancelled("one#1") == 0)
        for id in 2...40 { #expect(effects.probe.cancelled("k\(id)#1") == 1) }
        // The restored copy and a new branch of it reuse slots with other ids.
        try await loop.sendAndWait(.adopt(99, Kid.State(name: "late", query: 1)))
        #expect(effects.probe.started("late#1") == 1)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func aChildAddedBackUnderItsIDIsANewChildWhereverCompactionPutsIt(backend: Backend) async throws {
        let effects = Kid.Effects()
        let loop = makeLoop(backend, effects)
        try await loop.sendAndWait(.adopt(1, Kid.State(name: "one", query: 1)))
        try await loop.sendAndWait(.release(1))
        try await loop.sendAndWait(.adopt(1, Kid.State(name: "one", query: 1)))
        #expect(effects.probe.started("one#1") == 2)
        // Enough removals that the collection compacts: the second kid 1 moves into the slot the
        // first one held, which the feedback last saw naming id 1.
        for id in 100..<140 { try await loop.sendAndWait(.adopt(id, Kid.State(name: "k\(id)"))) }
        for id in 100..<140 { try await loop.sendAndWait(.release(id)) }
        #expect(loop.state.kids.ids == [1])

        try await loop.sendAndWait(.kid(1, .setQuery(2)))
        #expect(effects.probe.cancelled("one#1") == 2, "the kid now in the slot ran the effect, and it is the one cancelled")
        #expect(effects.probe.started("one#2") == 1)
        let sink = try #require(effects["one#2"])
        sink(.add(3))
        await loop.barrier()
        #expect(loop.state.kids[id: 1]?.count == 3)
        await loop.stop()
        #expect(effects.probe.cancelled("one#2") == 1)
    }

    @Test(arguments: Backend.allCases)
    func compactionMovesEveryLiveChildWithItsOwnFeedbacks(backend: Backend) async throws {
        let effects = Kid.Effects()
        let loop = makeLoop(backend, effects)
        // Kids 1 and 2 in slots 1 and 3, among 40 kids that go. The 32nd release compacts the
        // collection: kid 1 moves into slot 0 (kid 100's, ended), kid 2 into slot 1, which the
        // feedback last saw holding kid 1, still alive.
        try await loop.sendAndWait(.adopt(100, Kid.State(name: "k100")))
        try await loop.sendAndWait(.adopt(1, Kid.State(name: "one", query: 1)))
        try await loop.sendAndWait(.adopt(101, Kid.State(name: "k101")))
        try await loop.sendAndWait(.adopt(2, Kid.State(name: "two", query: 1)))
        for id in 102..<140 { try await loop.sendAndWait(.adopt(id, Kid.State(name: "k\(id)"))) }
        let before = effects.probe.entries
        for id in 100..<140 { try await loop.sendAndWait(.release(id)) }
        #expect(loop.state.kids.ids == [1, 2])
        #expect(effects.probe.entries == before, "moving a kid changes none of its queries: no effect starts or ends")

        try await loop.sendAndWait(.kid(2, .setQuery(2)))
        #expect(effects.probe.entries.suffix(2) == [.cancelled("two#1"), .started("two#2")])
        try await loop.sendAndWait(.kid(1, .setQuery(3)))
        #expect(effects.probe.entries.suffix(2) == [.cancelled("one#1"), .started("one#3")])
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func aCollectionBuiltElsewhereIsMatchedByID(backend: Backend) async throws {
        let effects = Kid.Effects()
        let loop = makeLoop(backend, effects)
        try await loop.sendAndWait(.adopt(1, Kid.State(name: "one", query: 1)))
        try await loop.sendAndWait(.adopt(2, Kid.State(name: "two", query: 1)))
        try await loop.sendAndWait(.restore([2: Kid.State(name: "two", query: 1), 3: Kid.State(name: "three", query: 1)]))
        #expect(effects.probe.entries == [
            .started("one#1"), .started("two#1"), .cancelled("one#1"), .started("three#1"),
        ], "two kept running: the same id is the same child")
        await loop.stop()
    }
}
