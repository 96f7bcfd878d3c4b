import FeedbackLoop

/// `composition`: a parent holding 1,000 children of one feature under their ids
/// (`KeyedChildScope` over `IdentifiedStates`), each running the child's feedback, with one
/// child changing per event — against the same child feature as a loop of its own.
///
/// The child is the idle counter: its reducer adds, its one `skippingRepeated` feedback's query
/// stays `nil`. Events are sent from one thread, to the children in turn.
///
/// The bound (issue 27's reading of issue 13's), per backend: an event into the parent of 1,000
/// keyed children costs at most 3× an event into a loop holding the same 1,000 children without
/// composition, a plain `[Int]` reduced by the same reducer with no feedback, on the same backend.
/// The loop keeps the last published state, so the first write after each event copies whatever
/// the state holds: that array is the floor for any state of 1,000 children, composed or not, and
/// the ratio is what composition adds to it. The ratio to the child's own loop (issue 13's first
/// reading) stays as information, and the bare reducer with the child's query is the limit column.
///
/// "hand-lifted" is what issue 13's user wrote: the same array with one feedback per child, every
/// child's query evaluated on every event.
public struct CompositionScenario: Sendable {
    public static let children = 1_000
    /// The most an event into the parent may cost, in events into a loop holding the same children
    /// in a plain array.
    public static let allowedRatio = 3.0

    public let size: BenchmarkSize

    public init(size: BenchmarkSize) { self.size = size }

    /// Events per run: the throughput count's tenth, at least one per child.
    var events: Int { Swift.max(Self.children, size.events / 10) }

    public func run(backends: [Backend], progress: Progress) async throws -> ScenarioReport {
        var report = ScenarioReport(
            scenario: .composition,
            limit: """
                bare reducer + the child's query; the bound: \(Self.children) keyed children at most \(Int(Self.allowedRatio))x \
                a plain array of \(Self.children) children reduced by the same loop
                """)
        let single = "1 child, a loop of its own"
        let composed = "\(Self.children) keyed children, 1 changes per event"
        let array = "plain array of \(Self.children) children, no feedback (no composition)"
        let bound = "\(Self.children) keyed children / plain array (at most \(Int(Self.allowedRatio)))"
        let ratio = "\(Self.children) keyed children / 1 child loop (information)"
        let handLifted = "hand-lifted: plain array, every child's query per event"
        let events = self.events
        progress("composition: limit")
        let limit = await best(of: size.repetitions) { await Self.bare(events: events) }
        report.recordLimit(single, "ns/event", .lower, value: limit)
        report.recordLimit(composed, "ns/event", .lower, value: limit)
        for backend in backends {
            try await report.measure(backend) { report in
                progress("composition: \(single), \(backend)")
                let alone = try await median(of: size.repetitions) { try await Self.measureSingle(backend, events: events) }
                progress("composition: \(composed), \(backend)")
                let together = try await median(of: size.repetitions) { try await Self.measureComposed(backend, events: events) }
                progress("composition: \(array), \(backend)")
                let plain = try await median(of: size.repetitions) {
                    try await Self.measureArray(backend, events: events, perChildFeedbacks: false)
                }
                report.record(single, "ns/event", .lower, backend: backend.rawValue, value: alone)
                report.record(composed, "ns/event", .lower, backend: backend.rawValue, value: together)
                report.record(array, "ns/event", .lower, backend: backend.rawValue, value: plain)
                report.record(bound, "x", .lower, backend: backend.rawValue, value: together / plain)
                report.record(ratio, "x", .lower, backend: backend.rawValue, value: together / alone)
                progress("composition: \(handLifted), \(backend)")
                // Every child's query on every event: a tenth of the events is plenty.
                let naive = try await median(of: size.repetitions) {
                    try await Self.measureArray(backend, events: Swift.max(Self.children, events / 10), perChildFeedbacks: true)
                }
                report.record(handLifted, "ns/event", .lower, backend: backend.rawValue, value: naive)
            }
        }
        return report
    }

    // MARK: The systems

    /// The child feature: an idle counter, written as if it ran alone.
    public enum Child {
        public static let reduce: @Sendable (inout Int, Int) -> Void = Systems.add
        public static let query: @Sendable (Int) -> Int? = { $0 < 0 ? $0 : nil }
        public static var feedbacks: [Feedback<Int, Int>] { [.skippingRepeated(query) { _ in .none }] }
    }

    public struct Parent: Sendable, Equatable {
        public var children = IdentifiedStates<Int, Int>()
    }

    public enum ParentEvent: Sendable, Equatable {
        case child(Int, Int)
    }

    public static let scope = KeyedChildScope(
        state: \Parent.children,
        embed: ParentEvent.child,
        extract: { if case .child(let id, let event) = $0 { (id, event) } else { nil } })

    /// The child feature as a loop of its own.
    public static func child(_ backend: Backend) -> Loop<Int, Int> {
        Loop(initial: 0, reduce: Child.reduce, feedbacks: Child.feedbacks, backend: backend)
    }

    /// The same ``children`` children held without composition: a plain array of counters reduced
    /// by the child's reducer, with no feedback (the bound's reference) or with one feedback per
    /// child whose query reads its element (the hand-lifted version).
    public static func plainArray(_ backend: Backend, perChildFeedbacks: Bool = false) -> Loop<[Int], ParentEvent> {
        let feedbacks: [Feedback<[Int], ParentEvent>] = perChildFeedbacks
            ? (0..<children).map { id in .skippingRepeated({ Child.query($0[id]) }) { _ in .none } }
            : []
        return Loop(
            initial: [Int](repeating: 0, count: children),
            reduce: { state, event in
                if case .child(let id, let amount) = event { Child.reduce(&state[id], amount) }
            },
            feedbacks: feedbacks,
            backend: backend)
    }

    public static func parent(_ backend: Backend) -> Loop<Parent, ParentEvent> {
        var initial = Parent()
        for id in 0..<children { initial.children[id: id] = 0 }
        return Loop(
            initial: initial,
            reduce: { state, event in scope.reduce(&state, event, with: Child.reduce) },
            feedbacks: [scope.feedback(Child.feedbacks)],
            backend: backend)
    }

    // MARK: Measuring

    /// Nanoseconds per event into the child's own loop, after checking every event was reduced.
    public static func measureSingle(_ backend: Backend, events: Int) async throws -> Double {
        let loop = child(backend)
        await loop.waitUntilIdle()
        let elapsed = await Nanoseconds.measure {
            await onDedicatedThreads(1) { _ in
                for _ in 0..<events { loop.send(1) }
            }
            await loop.waitUntilIdle()
        }
        try RunCheck(
            run: "composition, one child, \(backend)", expectedState: events, finalState: loop.state,
            expectedReduced: events, statistics: loop.statistics, expectedStarted: 0
        ).validate()
        await loop.stop()
        return Double(elapsed) / Double(events)
    }

    /// Nanoseconds per event into the parent of ``children`` children, one child per event in
    /// turn, after checking every event reached its child and none was orphaned.
    public static func measureComposed(_ backend: Backend, events: Int) async throws -> Double {
        let loop = parent(backend)
        await loop.waitUntilIdle()
        let elapsed = await Nanoseconds.measure {
            await onDedicatedThreads(1) { _ in
                for index in 0..<events { loop.send(.child(index % children, 1)) }
            }
            await loop.waitUntilIdle()
        }
        let total = loop.state.children.values.reduce(0, +)
        try RunCheck(
            run: "composition, \(children) children, \(backend)", expectedState: events, finalState: total,
            expectedReduced: events, statistics: loop.statistics, expectedStarted: 0
        ).validate()
        guard loop.statistics.eventsOrphaned == 0 else {
            throw ScenarioFailure("composition, \(backend): \(loop.statistics.eventsOrphaned) events orphaned")
        }
        await loop.stop()
        return Double(elapsed) / Double(events)
    }

    /// Nanoseconds per event into a loop whose state is a plain array of ``children`` counters,
    /// one counter per event in turn, with no feedback or with one per child.
    public static func measureArray(_ backend: Backend, events: Int, perChildFeedbacks: Bool) async throws -> Double {
        let loop = plainArray(backend, perChildFeedbacks: perChildFeedbacks)
        await loop.waitUntilIdle()
        let elapsed = await Nanoseconds.measure {
            await onDedicatedThreads(1) { _ in
                for index in 0..<events { loop.send(.child(index % children, 1)) }
            }
            await loop.waitUntilIdle()
        }
        try RunCheck(
            run: "composition, plain array, \(backend)", expectedState: events, finalState: loop.state.reduce(0, +),
            expectedReduced: events, statistics: loop.statistics, expectedStarted: 0
        ).validate()
        await loop.stop()
        return Double(elapsed) / Double(events)
    }

    /// The bare reducer and the child's query with its comparison, in a plain loop.
    static func bare(events: Int) async -> Double {
        let reduce = opaque(Child.reduce)
        let query = opaque(Child.query)
        let elapsed = await onDedicatedThread { () -> UInt64 in
            var state = 0
            var last: Int? = nil
            let elapsed = Nanoseconds.measure {
                for _ in 0..<events {
                    reduce(&state, 1)
                    let next = query(state)
                    if next != last { last = next }
                }
            }
            precondition(opaque(state) == events)
            return elapsed
        }
        return Double(elapsed) / Double(events)
    }
}
