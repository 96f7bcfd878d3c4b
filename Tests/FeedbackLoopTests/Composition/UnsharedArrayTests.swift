import Synchronization
import Testing

@testable import FeedbackLoop

/// A keyed feedback keeps its running children in `UnsharedArray`s: a child must be released
/// exactly when its slot is truncated or the table goes, never earlier (its effects would lose
/// their owner) and never twice.
@Suite struct UnsharedArrayTests {
    final class Tracked: Sendable {
        let value: Int
        let released: Counter
        init(_ value: Int, released: Counter) {
            self.value = value
            self.released = released
        }
        deinit { released.add() }
    }

    final class Counter: Sendable {
        private let count = Atomic<Int>(0)
        func add() { count.add(1, ordering: .relaxed) }
        var value: Int { count.load(ordering: .relaxed) }
    }

    @Test func growsKeepingEveryElementInOrder() {
        let array = UnsharedArray<Int>()
        for value in 0..<1_000 { array.append(value) }
        #expect(array.count == 1_000)
        #expect((0..<1_000).allSatisfy { array[$0] == $0 })
        array[500] += 1
        #expect(array[500] == 501)
    }

    @Test func truncationReleasesExactlyTheRemovedElements() {
        let released = Counter()
        let array = UnsharedArray<Tracked?>(capacity: 2)
        for value in 0..<100 { array.append(Tracked(value, released: released)) }
        array.truncate(to: 60)
        #expect(released.value == 40)
        #expect(array.count == 60)
        #expect(array[59]?.value == 59)
        array.truncate(to: 80)  // longer than it is: nothing happens
        #expect(array.count == 60 && released.value == 40)
        array[10] = nil
        #expect(released.value == 41)
        array.append(Tracked(100, released: released))
        #expect(array[60]?.value == 100)
    }

    @Test func theRestGoWithTheArray() {
        let released = Counter()
        do {
            let array = UnsharedArray<Tracked>()
            for value in 0..<33 { array.append(Tracked(value, released: released)) }
            array.reserveCapacity(1_000)
            #expect(array[32].value == 32)
            #expect(released.value == 0)
        }
        #expect(released.value == 33)
    }
}
