import FeedbackLoop
import Testing

/// The keyed children's collection: a dictionary in insertion order, whatever the removals.
@Suite("IdentifiedStates")
struct IdentifiedStatesTests {
    @Test func addsInOrderReplacesInPlaceRemovesAndKeepsOrderAcrossCompaction() {
        var states = IdentifiedStates<String, Int>()
        for (index, id) in ["a", "b", "c"].enumerated() { states[id: id] = index }
        states[id: "a"] = 10
        #expect(states.ids == ["a", "b", "c"], "replacing keeps the place")
        #expect(states.values == [10, 1, 2])
        states[id: "b"] = nil
        #expect(states.ids == ["a", "c"])
        #expect(states.removeValue(forID: "zzz") == nil)
        #expect(states.removeValue(forID: "c") == 2)
        states[id: "b"] = 5
        #expect(states.ids == ["a", "b"], "an id added again goes to the end")

        var many = IdentifiedStates<Int, Int>()
        for id in 0..<200 { many[id: id] = id }
        for id in 0..<200 where id % 3 != 0 { many[id: id] = nil }   // enough holes to compact
        #expect(many.ids == Array(stride(from: 0, to: 200, by: 3)))
        #expect(many.count == 67)
        many[id: 1000] = 1
        #expect(many.ids.last == 1000)
    }

    @Test func modifyChangesOneChildAndReportsAMissingOne() {
        var states: IdentifiedStates<Int, [String]> = [1: ["a"], 2: []]
        #expect(states.modify(id: 2) { $0.append("b"); return $0.count } == 1)
        #expect(states.modify(id: 3) { $0.append("never") } == nil)
        states[id: 1]?.append("c")
        #expect(states == [1: ["a", "c"], 2: ["b"]])
        #expect(!states.contains(id: 3))
    }

    @Test func equalityIsAboutContentsAndOrder() {
        let built: IdentifiedStates<Int, Int> = [1: 1, 2: 2]
        var changed = built
        changed[id: 2] = 20
        changed[id: 2] = 2
        #expect(changed == built, "the same contents through other writes")
        #expect(IdentifiedStates<Int, Int>([(2, 2), (1, 1)]) != built, "order matters")
        #expect(IdentifiedStates<Int, Int>([(1, 0), (1, 1)]) == [1: 1], "a repeated id replaces the earlier value")
        #expect(built.description == "[1: 1, 2: 2]")
    }
}
