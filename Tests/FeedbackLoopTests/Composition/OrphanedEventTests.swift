import FeedbackLoop
import Logging
import Testing

/// An event for a child that no longer exists is dropped, counted and logged once, and never
/// reaches another child.
@Suite("Composition: orphaned events")
struct OrphanedEventTests {
    @Test(arguments: Backend.allCases)
    func anEventForAnAbsentOptionalChildIsCountedAndChangesNothing(backend: Backend) async throws {
        let effects = Kid.Effects()
        let logs = Locked<[(level: Logger.Level, message: String)]>([])
        let loop = Loop(
            initial: Family.State(),
            reduce: Family.reduce,
            feedbacks: Family.feedbacks(effects),
            backend: backend,
            configuration: LoopConfiguration(label: "family", logger: CapturingLogHandler.logger(into: logs)))
        let before = try await loop.sendAndWait(.setGuest(nil))
        let after = try await loop.sendAndWait(.guest(.add(1)))
        #expect(after == before)
        try await loop.sendAndWait(.guest(.add(2)))
        #expect(loop.statistics.eventsOrphaned == 2)
        let warnings = logs.current.filter { $0.level >= .warning }.map(\.message)
        #expect(warnings.count == 1, "logged once, counted every time")
        #expect(warnings.first?.contains("no longer exists") == true)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func anEventForARemovedKeyedChildReachesNoOtherChild(backend: Backend) async throws {
        let effects = Kid.Effects()
        let loop = Loop(initial: Family.State(), reduce: Family.reduce, feedbacks: Family.feedbacks(effects), backend: backend)
        try await loop.sendAndWait(.adopt(1, Kid.State(name: "one")))
        try await loop.sendAndWait(.adopt(2, Kid.State(name: "two")))
        try await loop.sendAndWait(.release(1))
        let state = try await loop.sendAndWait(.kid(1, .add(5)))
        #expect(state.kids.ids == [2])
        #expect(state.kids[id: 2]?.count == 0)
        #expect(loop.statistics.eventsOrphaned == 1)

        try await loop.sendAndWait(.kid(3, .add(5)))
        #expect(loop.statistics.eventsOrphaned == 2, "an id that never existed is orphaned too")
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func aRemovedChildsLateEventNeverReachesTheChildThatReusesItsID(backend: Backend) async throws {
        let effects = Kid.Effects()
        let loop = Loop(initial: Family.State(), reduce: Family.reduce, feedbacks: Family.feedbacks(effects), backend: backend)
        try await loop.sendAndWait(.adopt(1, Kid.State(name: "old", query: 1)))
        let old = try #require(effects["old#1"])
        try await loop.sendAndWait(.release(1))
        try await loop.sendAndWait(.adopt(1, Kid.State(name: "new", query: 1)))
        old(.add(100))
        await loop.barrier()
        #expect(loop.state.kids[id: 1]?.count == 0)
        #expect(loop.statistics.eventsDroppedFromCancelledEffects == 1)
        await loop.stop()
    }

    @Test(arguments: Backend.allCases)
    func anEventThatMakesTheParentRemoveTheChildIsNotOrphaned(backend: Backend) async throws {
        let effects = Kid.Effects()
        let loop = Loop(
            initial: Family.State(),
            reduce: { state, event in
                Family.reduce(&state, event)
                // The parent lets a kid go when it reaches ten.
                if case .kid(let id, .add) = event, (state.kids[id: id]?.count ?? 0) >= 10 { state.kids[id: id] = nil }
            },
            feedbacks: Family.feedbacks(effects),
            backend: backend)
        try await loop.sendAndWait(.adopt(1, Kid.State(name: "one")))
        try await loop.sendAndWait(.kid(1, .add(10)))
        #expect(loop.state.kids.isEmpty)
        #expect(loop.statistics.eventsOrphaned == 0)
        await loop.stop()
    }
}
