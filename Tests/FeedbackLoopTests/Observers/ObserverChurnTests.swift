import Testing

@testable import FeedbackLoop

/// Observers joining and leaving in any order, many at a time, on every backend: each still sees
/// the state current when it joined and then every later one, none after it left, and observers
/// are called in the order they joined. Dozens live at once, so the observer list's index, its
/// holes and its compactions are all on the path.
@Suite struct ObserverChurnTests {
    /// One call of the script, made from the test's task in this order.
    enum Step: Equatable {
        /// Send an event adding this much to the counter.
        case send(Int)
        /// A new observer joins (`observe`); every tenth is a `states` subscriber instead,
        /// which stays until the loop stops.
        case join
        /// The observer that joined `n`th (from 0) cancels its observation; it may have left
        /// already, which makes this a second cancel.
        case leave(Int)
    }

    /// A seeded script in three phases: growing to dozens of observers, shrinking to a few,
    /// hovering around a handful, with sends in between throughout.
    static func script(seed: UInt64) -> [Step] {
        var random = SplitMix64(seed: seed)
        var steps: [Step] = []
        var joined = 0
        for (count, joinPercent, leavePercent) in [(300, 55, 20), (300, 15, 55), (300, 35, 35)] {
            for _ in 0..<count {
                let roll = random.int(100)
                if roll < joinPercent || joined == 0 {
                    steps.append(.join)
                    joined += 1
                } else if roll < joinPercent + leavePercent {
                    steps.append(.leave(random.chance(0.3) ? joined - 1 - random.int(Swift.min(joined, 4)) : random.int(joined)))
                } else {
                    steps.append(.send(1 + random.int(9)))
                }
            }
        }
        return steps
    }

    static func isStatesSubscriber(_ observer: Int) -> Bool { observer % 10 == 9 }

    struct Call: Equatable, CustomStringConvertible {
        var observer: Int
        var state: Int
        var description: String { "\(observer)←\(state)" }
    }

    /// What the script must produce: every `observe` call in order, and the states each `states`
    /// subscriber gets before the stop finishes it.
    static func expected(_ steps: [Step]) -> (calls: [Call], streams: [Int: [Int]], liveAtStop: Int, peakLive: Int) {
        var state = 0
        var live: [Int] = []
        var calls: [Call] = []
        var streams: [Int: [Int]] = [:]
        var joined = 0
        var peakLive = 0
        func deliver(_ observer: Int) {
            if isStatesSubscriber(observer) {
                streams[observer, default: []].append(state)
            } else {
                calls.append(Call(observer: observer, state: state))
            }
        }
        for step in steps {
            switch step {
            case .send(let amount):
                state += amount
                for observer in live { deliver(observer) }
            case .join:
                deliver(joined)
                live.append(joined)
                joined += 1
                peakLive = Swift.max(peakLive, live.count)
            case .leave(let observer):
                if !isStatesSubscriber(observer) { live.removeAll { $0 == observer } }
            }
        }
        return (calls, streams, live.count, peakLive)
    }

    @Test(arguments: Backend.allCases)
    func churnKeepsJoiningOrderAndExactDelivery(backend: Backend) async throws {
        let steps = Self.script(seed: 12)
        let expected = Self.expected(steps)
        #expect(expected.peakLive > 4 * ObserverList<Int>.linearLimit, "the script never gets the list long")
        #expect(expected.liveAtStop > 3 && expected.calls.count > 1_000, "the script exercises too little")

        let loop = Loop(initial: 0, reduce: { $0 += $1 }, backend: backend)
        let calls = Locked<[Call]>([])
        var observations: [Int: Observation] = [:]
        var streams: [Int: AsyncStream<Int>] = [:]
        var joined = 0
        for step in steps {
            switch step {
            case .send(let amount):
                loop.send(amount)
            case .join:
                let observer = joined
                if Self.isStatesSubscriber(observer) {
                    streams[observer] = loop.states
                } else {
                    observations[observer] = loop.observe { calls.append(Call(observer: observer, state: $0)) }
                }
                joined += 1
            case .leave(let observer):
                observations[observer]?.cancel()
            }
        }
        await loop.waitUntilIdle()
        #expect(await loop.engine.observerCount() == expected.liveAtStop)
        await loop.stop()
        #expect(await loop.engine.observerCount() == 0)
        // Leaving after the stop: nothing to remove any more, nothing delivered.
        for observation in observations.values { observation.cancel() }
        await loop.waitUntilIdle()

        let actual = calls.current
        if let first = zip(actual, expected.calls).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
            Issue.record("call \(first) differs: \(actual[first]) instead of \(expected.calls[first])")
        }
        #expect(actual.count == expected.calls.count)
        for (observer, stream) in streams.sorted(by: { $0.key < $1.key }) {
            let states = try await withDeadline("the states of subscriber \(observer) to finish at stop") {
                var states: [Int] = []
                for await state in stream { states.append(state) }
                return states
            }
            #expect(states == expected.streams[observer], "subscriber \(observer)")
        }
    }

    /// The machine tolerates a leave for an observer that has gone: the same id removed twice
    /// (which `Observation` never sends, but a racing `states` termination could) and an id that
    /// never joined leave the others as they were.
    @Test(arguments: Backend.allCases)
    func aSecondLeaveForTheSameObserverChangesNothing(backend: Backend) async throws {
        let loop = Loop(initial: 0, reduce: { $0 += $1 }, backend: backend)
        let calls = Locked<[Call]>([])
        var ids: [Int] = []
        for observer in 0..<(ObserverList<Int>.linearLimit + 4) {
            let id = loop.engine.addObserver(onState: { calls.append(Call(observer: observer, state: $0)) }, onStop: nil)
            ids.append(try #require(id))
        }
        loop.engine.removeObserver(ids[3])
        loop.send(1)
        loop.engine.removeObserver(ids[3])
        loop.engine.removeObserver(ids.last! + 1_000)
        loop.send(2)
        await loop.waitUntilIdle()
        #expect(await loop.engine.observerCount() == ids.count - 1)
        await loop.stop()
        loop.engine.removeObserver(ids[5])

        let observers = Array(ids.indices)
        let remaining = observers.filter { $0 != 3 }
        let expected = observers.map { Call(observer: $0, state: 0) }
            + remaining.map { Call(observer: $0, state: 1) }
            + remaining.map { Call(observer: $0, state: 3) }
        #expect(calls.current == expected)
    }
}
