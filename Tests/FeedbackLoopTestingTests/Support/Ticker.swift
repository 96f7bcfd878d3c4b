import FeedbackLoop
import FeedbackLoopTesting

/// A counter with a timer: `start` ticks once a second on the given clock until `stop`.
enum Ticker {
    struct State: Equatable, Sendable {
        var count = 0
        var isTicking = false
    }

    enum Event: Equatable, Sendable {
        case increment
        case start
        case stop
        case tick
        /// Ignored by the reducer: changes nothing.
        case noop
    }

    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .increment, .tick: state.count += 1
        case .start: state.isTicking = true
        case .stop: state.isTicking = false
        case .noop: break
        }
    }

    static func feedbacks(clock: any Clock<Duration>) -> [Feedback<State, Event>] {
        [
            .whenBecomesTrue({ $0.isTicking }) { _ in
                .run { send in
                    while true {
                        try await clock.sleep(for: .seconds(1))
                        send(.tick)
                    }
                }
            }
        ]
    }
}

extension Ticker {
    /// A test loop of the ticker: with its timer feedback on `clock` when one is given, or the bare
    /// reducer when not.
    static func testLoop(
        clock: (any Clock<Duration>)? = nil,
        backend: Backend,
        exhaustivity: Exhaustivity = .on,
        labeled: Bool = false
    ) -> TestLoop<State, Event> {
        let timers = clock.map { Self.feedbacks(clock: $0) } ?? []
        return TestLoop(
            initial: State(), reduce: reduce, feedbacks: labeled ? timers.map { $0.labeled("ticker") } : timers,
            backend: backend, exhaustivity: exhaustivity, timeout: suiteTimeout)
    }
}

/// The bound the suite's test loops wait for a late event or for idle. Longer than the kit's
/// 2-second default: the whole package's tests share two cores, and an actor loop's drain can wait
/// seconds for a pool thread while other tests drain a million events. A passing test never
/// waits for it; the tests of the default itself build their loops without it.
let suiteTimeout: Duration = .seconds(60)
