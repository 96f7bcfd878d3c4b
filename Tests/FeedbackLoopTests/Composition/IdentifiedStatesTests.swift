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

    /// Copies share their chunks until one of them writes: every kind of write, on either side
    /// of a chunk's edge and past the directory's capacity, leaves the other copies as they were.
    @Test func aWriteNeverReachesAnotherCopy() {
        var states = IdentifiedStates<Int, [Int]>()
        for id in 0..<100 { states[id: id] = [id] }
        let before = states
        let snapshot = Array(before)

        states.modify(id: 31) { $0.append(-1) }     // the last slot of the first chunk
        states[id: 32]?.append(-2)                  // the first of the second
        states[id: 99] = nil
        for id in 100..<300 { states[id: id] = [id] }  // new chunks, the directory grows
        let grown = states
        states[id: 5] = [0]
        for id in 0..<250 where id % 2 == 0 { states[id: id] = nil }  // enough holes to compact
        states.removeAll()
        states[id: 7] = [7]

        #expect(before.map(\.id) == snapshot.map(\.id))
        #expect(before.map(\.value) == snapshot.map(\.value), "writes reached a copy made before them")
        #expect(grown.count == 299 && grown[id: 5] == [5] && grown[id: 31] == [31, -1] && grown[id: 32] == [32, -2])
        #expect(grown[id: 299] == [299] && grown[id: 99] == nil)
        #expect(states.ids == [7])
    }

    /// Revisions are unique across copies: two copies of one collection, each written in its own
    /// way, never carry the same revision, which `==` (and a keyed feedback) would take for the
    /// same contents. Every kind of write, and past the end of a block of revisions.
    @Test func copiesWrittenApartNeverLookAlike() {
        var original = IdentifiedStates<Int, Int>()
        for id in 0..<40 { original[id: id] = 0 }
        var left = original
        var right = original
        left[id: 1] = 1
        right[id: 2] = 2
        #expect(left != right, "a write to each copy")
        left.modify(id: 3) { $0 = 3 }
        right.modify(id: 4) { $0 = 4 }
        #expect(left != right, "a change in place to each copy")
        left[id: 5] = nil
        right[id: 6] = nil
        #expect(left != right, "a removal from each copy")
        var next = left
        for round in 0..<5_000 { left.modify(id: 7) { $0 = round } }
        for round in 0..<5_000 { next.modify(id: 8) { $0 = round } }
        #expect(left != next, "thousands of writes to each copy")
    }

    /// A loop's pattern: the state is written, then published (a copy), and the copy published
    /// before goes, unless a reader still holds it. A write reuses the directory of a copy that
    /// went; one a reader holds must stay as the reader got it.
    @Test func copiesPublishedInTurnStayAsTheyWereWhileHeld() {
        var states = IdentifiedStates<Int, [Int]>()
        var model: [(id: Int, value: [Int])] = []
        for id in 0..<100 {
            states[id: id] = [id]
            model.append((id, [id]))
        }
        var published = states
        var held: [(copy: IdentifiedStates<Int, [Int]>, values: [[Int]])] = []
        for event in 0..<200 {
            let id = (event * 7) % 100
            states.modify(id: id) { $0.append(event) }
            model[id].value.append(event)
            if event % 3 == 0 {
                states[id: 100 + event] = [event]   // new chunks: the directory grows
                model.append((100 + event, [event]))
            }
            if event % 10 == 0 { held.append((published, published.values)) }
            published = states
        }
        for (copy, values) in held {
            #expect(copy.values == values, "a write reached a copy a reader held")
        }
        #expect(published.ids == model.map(\.id))
        #expect(published.values == model.map(\.value))
    }
}

