import FeedbackLoop

/// The loop definitions every scenario, workload and package-benchmark benchmark runs: written
/// once against the public API, exactly as a user would, and run on whichever `Backend` is
/// asked for.
public enum Systems {
    // MARK: Counter (throughput, latency, loops, W1)

    /// Adds each event to the state.
    public static let add: @Sendable (inout Int, Int) -> Void = { state, event in state &+= event }

    /// Replaces the state with each event: the latest event sent.
    public static let latest: @Sendable (inout Int, Int) -> Void = { state, event in state = event }

    /// A counter loop with no feedbacks: the cost of the queue, the reducer and publishing.
    public static func counter(_ backend: Backend, initial: Int = 0) -> Loop<Int, Int> {
        Loop(initial: initial, reduce: add, backend: backend)
    }

    /// A counter loop with one feedback whose query stays `nil`: the shape of an idle loop in a
    /// real program, which has rules waiting for their moment.
    public static func idleCounter(_ backend: Backend) -> Loop<Int, Int> {
        Loop(
            initial: 0,
            reduce: add,
            feedbacks: [.skippingRepeated({ $0 < 0 ? $0 : nil }) { _ in .none }],
            backend: backend)
    }

    // MARK: Ping-pong (W2)

    public struct PingPong: Sendable, Hashable {
        public var running = false
        public var count = 0
        public let target: Int

        public init(target: Int) { self.target = target }

        public enum Event: Sendable, Hashable {
            case start
            case next
        }

        public static let reduce: @Sendable (inout PingPong, Event) -> Void = { state, event in
            switch event {
            case .start: state.running = true
            case .next: state.count += 1
            }
        }

        /// The query: the count while the game runs and has not reached its target.
        public static let query: @Sendable (PingPong) -> Int? = { state in
            state.running && state.count < state.target ? state.count : nil
        }
    }

    /// A loop whose one `skippingRepeated` feedback answers every new count with the next event,
    /// until `cycles` events have been answered. Send ``PingPong/Event/start`` to play.
    public static func pingPong(_ backend: Backend, cycles: Int) -> Loop<PingPong, PingPong.Event> {
        Loop(
            initial: PingPong(target: cycles),
            reduce: PingPong.reduce,
            feedbacks: [.skippingRepeated(PingPong.query) { _ in .send(.next) }],
            backend: backend)
    }

    // MARK: Fan-out

    /// A counter loop with `feedbacks` feedbacks whose queries run on every state and stay `nil`.
    public static func fanout(_ backend: Backend, feedbacks: Int) -> Loop<Int, Int> {
        Loop(
            initial: 0,
            reduce: add,
            feedbacks: (0..<feedbacks).map { index in .skippingRepeated(fanoutQuery(index)) { _ in .none } },
            backend: backend)
    }

    /// Feedback `index`'s query: `nil` for every count the benchmark reaches.
    public static func fanoutQuery(_ index: Int) -> @Sendable (Int) -> Int? {
        { state in state < 0 ? index : nil }
    }

    // MARK: Switch-latest churn (W3)

    public struct Churn: Sendable, Hashable {
        public var generation = 0

        public init() {}

        public enum Event: Sendable, Hashable {
            /// A new generation: cancels the running effect and starts the next.
            case next
            /// Changes nothing; lets `sendAndWait` confirm that every earlier event was handled.
            case sync
        }

        public static let reduce: @Sendable (inout Churn, Event) -> Void = { state, event in
            if event == .next { state.generation += 1 }
        }
    }

    /// A loop whose `skippingRepeated` feedback runs one never-ending effect per generation: every
    /// ``Churn/Event/next`` cancels the running effect and starts another. The effects report to
    /// `census`; when it has stamps, the loop stamps each state change for the latency figures.
    public static func churn(_ backend: Backend, census: EffectCensus) -> Loop<Churn, Churn.Event> {
        let stamps = census.stamps
        return Loop(
            initial: Churn(),
            reduce: Churn.reduce,
            feedbacks: [
                .skippingRepeated({ $0.generation }) { generation in
                    .run { _ in await census.parkUntilCancelled(generation: generation) }
                }
            ],
            backend: backend,
            instrumentation: stamps.map { stamps in
                LoopInstrumentation(onTransition: { before, _, after in
                    if after.generation != before.generation { stamps[after.generation] = Nanoseconds.now() }
                })
            })
    }

    /// ``churn(_:census:)`` with a `.callback` effect instead of a `.run` task: the effect starts on
    /// the drain thread and its cancellation is a closure, so the churn costs no task. W3 with
    /// this effect measures the engine's own switch-latest bookkeeping.
    public static func churnCallback(_ backend: Backend, census: EffectCensus) -> Loop<Churn, Churn.Event> {
        Loop(
            initial: Churn(),
            reduce: Churn.reduce,
            feedbacks: [
                .skippingRepeated({ $0.generation }) { generation in
                    .callback { _ in
                        census.began()
                        return Cancellation { census.ended(generation: generation) }
                    }
                }
            ],
            backend: backend)
    }

    // MARK: Set-based churn and stop under load

    public struct Requests: Sendable, Hashable {
        public var active: Set<Int>
        public var next: Int

        public init(concurrent: Int) {
            self.active = Set(0..<concurrent)
            self.next = concurrent
        }

        public enum Event: Sendable, Hashable {
            /// Retires the oldest request and adds a new one, so the set keeps its size.
            case rotate(concurrent: Int)
            /// Changes nothing; lets `sendAndWait` confirm that every earlier event was handled.
            case sync
        }

        public static let reduce: @Sendable (inout Requests, Event) -> Void = { state, event in
            switch event {
            case .rotate(let concurrent):
                state.active.remove(state.next - concurrent)
                state.active.insert(state.next)
                state.next += 1
            case .sync:
                break
            }
        }
    }

    /// A loop with one `requests` feedback running a never-ending effect per active request.
    public static func requests(
        _ backend: Backend, concurrent: Int, census: EffectCensus
    ) -> Loop<Requests, Requests.Event> {
        Loop(
            initial: Requests(concurrent: concurrent),
            reduce: Requests.reduce,
            feedbacks: [.requests({ $0.active }) { _ in .run { _ in await census.parkUntilCancelled() } }],
            backend: backend)
    }

    /// ``Requests`` with each request a keyed child in an `IdentifiedStates` instead of a member
    /// of a `Set`: the child's one feedback runs the request's effect for as long as the child
    /// exists. The lifted feedback finds the two children an event wrote from the collection's
    /// revisions, so an event costs O(changes), where `requests` diffs the whole set.
    public struct KeyedRequests: Sendable {
        /// Each active request under its own number.
        public var active: IdentifiedStates<Int, Int>
        public var next: Int

        public init(concurrent: Int) {
            self.active = IdentifiedStates((0..<concurrent).map { ($0, $0) })
            self.next = concurrent
        }

        public enum Event: Sendable, Hashable {
            /// Retires the oldest request and adds a new one, so the collection keeps its size.
            case rotate(concurrent: Int)
            /// Changes nothing; lets `sendAndWait` confirm that every earlier event was handled.
            case sync
        }

        public static let reduce: @Sendable (inout KeyedRequests, Event) -> Void = { state, event in
            switch event {
            case .rotate(let concurrent):
                state.active[id: state.next - concurrent] = nil
                state.active[id: state.next] = state.next
                state.next += 1
            case .sync:
                break
            }
        }

        /// The requests send nothing: no child event reaches the parent.
        static let scope = KeyedChildScope<KeyedRequests, Event, Int, Int, Never>(
            state: \.active,
            embed: { (_: Int, _: Never) -> Event in },
            extract: { _ in nil })
    }

    /// ``requests(_:concurrent:census:)`` with the requests as keyed children.
    public static func keyedRequests(
        _ backend: Backend, concurrent: Int, census: EffectCensus
    ) -> Loop<KeyedRequests, KeyedRequests.Event> {
        Loop(
            initial: KeyedRequests(concurrent: concurrent),
            reduce: KeyedRequests.reduce,
            feedbacks: [
                KeyedRequests.scope.feedback([
                    .skippingRepeated({ (request: Int) -> Int? in request }) { _ in
                        .run { _ in await census.parkUntilCancelled() }
                    }
                ])
            ],
            backend: backend)
    }
}
