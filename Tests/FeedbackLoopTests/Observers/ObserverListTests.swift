import Testing

@testable import FeedbackLoop

/// The machine's observer list on its own: it behaves like the plain array it replaced (joining
/// order, exact removal), and joining and leaving cost work linear in the number of observers,
/// counted rather than timed.
@Suite struct ObserverListTests {
    typealias List = ObserverList<Int>

    static func entry(_ id: Int) -> ObserverEntry<Int> {
        ObserverEntry(id: id, onState: { _ in }, onStop: nil)
    }

    /// What a plain array of observers holds after the same calls: the oracle.
    struct Oracle {
        var ids: [Int] = []

        mutating func remove(_ id: Int) -> Bool {
            guard let index = ids.firstIndex(of: id) else { return false }
            ids.remove(at: index)
            return true
        }
    }

    /// The list's layout rules: few holes, an index exactly when long, every position right.
    static func checkLayout(_ list: List, _ context: String) {
        #expect(list.holes * 2 <= list.entries.count, "more holes than live entries (\(context))")
        #expect(list.entries.count { $0 == nil } == list.holes, "holes miscounted (\(context))")
        if list.entries.count <= List.linearLimit {
            #expect(list.holes == 0 && list.positions.isEmpty, "a short list is not a plain array (\(context))")
        } else {
            #expect(list.positions.count == list.count, "the index misses or keeps ids (\(context))")
            for (id, index) in list.positions {
                #expect(list.entries[index]?.id == id, "id \(id) indexed at the wrong place (\(context))")
            }
        }
    }

    @Test(arguments: [1, 2, 3])
    func followsAPlainArrayThroughRandomChurn(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var list = List()
        var oracle = Oracle()
        var nextID = 0
        // Three phases: growing to about a hundred, shrinking to a handful, then hovering around
        // `linearLimit`, so that compactions and the switch between layouts happen both ways.
        for (steps, joinPercent) in [(400, 65), (400, 30), (600, 50)] {
            for step in 0..<steps {
                let context = "seed \(seed), step \(step), \(oracle.ids.count) live"
                if random.int(100) < joinPercent || oracle.ids.isEmpty {
                    list.append(Self.entry(nextID))
                    oracle.ids.append(nextID)
                    nextID += 1
                } else {
                    // A live observer (oldest, newest or any), or now and then one that left.
                    let id: Int
                    switch random.int(4) {
                    case 0: id = oracle.ids[0]
                    case 1: id = oracle.ids[oracle.ids.count - 1]
                    case 2: id = oracle.ids[random.int(oracle.ids.count)]
                    default: id = random.int(nextID)
                    }
                    let removed = list.remove(id: id)
                    #expect(removed == oracle.remove(id), "removing \(id) (\(context))")
                }
                #expect(list.map(\.id) == oracle.ids, "order or membership differs (\(context))")
                #expect(list.count == oracle.ids.count)
                Self.checkLayout(list, context)
            }
        }
    }

    @Test func removingAnIdTwiceOrOneNeverAddedChangesNothing() {
        for size in [3, List.linearLimit + 20] {
            var list = List()
            for id in 0..<size { list.append(Self.entry(id)) }
            let removals = [list.remove(id: 1), list.remove(id: 1), list.remove(id: size + 5)]
            #expect(removals == [true, false, false])
            #expect(list.map(\.id) == [0] + Array(2..<size))
            Self.checkLayout(list, "size \(size)")
        }
    }

    /// The orders observers leave in: each hurts some design (a scan from the front pays most
    /// for the newest, one from the back for the oldest, holes pile up in the middle).
    enum LeavingOrder: String, CaseIterable, CustomTestStringConvertible {
        case oldestFirst, newestFirst, middleOut, shuffled
        var testDescription: String { rawValue }

        func ids(_ count: Int) -> [Int] {
            switch self {
            case .oldestFirst:
                return Array(0..<count)
            case .newestFirst:
                return Array((0..<count).reversed())
            case .middleOut:
                var ids: [Int] = []
                var (low, high) = (count / 2 - 1, count / 2)
                while low >= 0 || high < count {
                    if high < count { ids.append(high); high += 1 }
                    if low >= 0 { ids.append(low); low -= 1 }
                }
                return ids
            case .shuffled:
                var ids = Array(0..<count)
                var random = SplitMix64(seed: 42)
                for index in ids.indices.reversed() { ids.swapAt(index, random.int(index + 1)) }
                return ids
            }
        }
    }

    #if DEBUG
    /// The quadratic cost the list replaced, caught by counting: a scan per removal visits
    /// about N²/2 entries for N observers (50,000,000 here), the list at most a few per observer.
    @Test(arguments: LeavingOrder.allCases)
    func joiningAndLeavingCostLinearWork(order: LeavingOrder) {
        let count = 10_000
        var list = List()
        for id in 0..<count { list.append(Self.entry(id)) }
        let leaving = order.ids(count)
        #expect(leaving.sorted() == Array(0..<count))
        for (index, id) in leaving.enumerated() {
            let removed = list.remove(id: id)
            #expect(removed, "\(id) was not there")
            if index % 1_000 == 0 { Self.checkLayout(list, "\(order), \(index) left") }
        }
        #expect(list.isEmpty)
        #expect(list.slotsVisited <= 6 * count, "\(list.slotsVisited) entries visited for \(count) observers")
        // The storage shrank with the live count: no trace of the 10,000 is kept.
        #expect(list.entries.capacity < 64 && list.positions.isEmpty)
    }
    #endif
}
