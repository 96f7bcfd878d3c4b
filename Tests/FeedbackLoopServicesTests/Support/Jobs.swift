import FeedbackLoop

/// A small system whose effects the test controls: a quick job that finishes when the test
/// releases it, a stuck job that ends only when cancelled, and a job that fails.
enum Jobs {
    struct State: Equatable, Sendable {
        var total = 0
        var quickRequested = false
        var quickDone = false
        var stuckRequested = false
        var failingRequested = false
    }

    enum Event: Equatable, Sendable {
        case add(Int)
        case startQuick
        case quickDone
        case startStuck
        case stopStuck
        case startFailing
    }

    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .add(let n): state.total += n
        case .startQuick: state.quickRequested = true
        // The quick job's query stays true, so finishing never cancels it: it ends by itself.
        case .quickDone: state.quickDone = true
        case .startStuck: state.stuckRequested = true
        case .stopStuck: state.stuckRequested = false
        case .startFailing: state.failingRequested = true
        }
    }

    struct Failure: Error {}

    /// What the test sees of the jobs and how it steers them.
    final class Probe: Sendable {
        let quickStarted = Gate()
        let releaseQuick = Gate()
        let stuckStarted = Gate()
        let stuckCancelled = Gate()
        private let stuckReleased = Gate()

        var feedbacks: [Feedback<State, Event>] {
            [
                .whenBecomesTrue({ $0.quickRequested }) { [quickStarted, releaseQuick] _ in
                    .run { send in
                        quickStarted.open()
                        await releaseQuick.wait()
                        send(.quickDone)
                    }
                },
                .whenBecomesTrue({ $0.stuckRequested }) { [stuckStarted, stuckCancelled, stuckReleased] _ in
                    .run { _ in
                        stuckStarted.open()
                        await withTaskCancellationHandler {
                            await stuckReleased.wait()
                        } onCancel: {
                            stuckCancelled.open()
                            stuckReleased.open()
                        }
                    }
                },
                .whenBecomesTrue({ $0.failingRequested }) { _ in
                    .run { _ in throw Failure() }
                },
            ]
        }
    }

    static func loop(_ probe: Probe, backend: Backend, instrumentation: LoopInstrumentation<State, Event>? = nil)
        -> Loop<State, Event>
    {
        Loop(
            initial: State(),
            reduce: reduce,
            feedbacks: probe.feedbacks,
            backend: backend,
            configuration: LoopConfiguration(label: "jobs", onEffectError: { _ in }),
            instrumentation: instrumentation)
    }
}
