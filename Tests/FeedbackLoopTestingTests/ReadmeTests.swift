// The README's "Testing a feature" section shows the slices of this file verbatim
// (`.ci/readme-snippets.py check` keeps them in step), so what it shows compiles and passes.

// snippet.feature
import FeedbackLoop

/// A metronome: `start` ticks once a second on the clock it is given, until `stop`.
enum Metronome {
    struct State: Equatable, Sendable {
        var ticks = 0
        var isRunning = false
    }

    enum Event: Equatable, Sendable { case start, stop, tick }

    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .start: state.isRunning = true
        case .stop: state.isRunning = false
        case .tick: state.ticks += 1
        }
    }

    static func feedbacks(clock: any Clock<Duration>) -> [Feedback<State, Event>] {
        [
            .whenBecomesTrue({ $0.isRunning }) { _ in       // started by `start`, cancelled by `stop`
                .run { send in
                    while true {
                        try await clock.sleep(for: .seconds(1))
                        send(.tick)
                    }
                }
            }
            .labeled("metronome")
        ]
    }
}
// snippet.end

// snippet.swift-testing
import FeedbackLoopTesting
import Testing

@Test(arguments: Backend.allCases)
func metronomeTicksWhileRunning(backend: Backend) async {
    let clock = TestClock()
    let loop = TestLoop(
        initial: Metronome.State(), reduce: Metronome.reduce,
        feedbacks: Metronome.feedbacks(clock: clock), backend: backend)
    await loop.send(.start) { $0.isRunning = true }      // the exact mutation, or a failure with a diff
    await loop.advance(clock, by: .seconds(1))           // once the timer sleeps on the clock
    await loop.receive(.tick) { $0.ticks = 1 }           // events from effects, in order
    await loop.send(.stop) { $0.isRunning = false }      // cancels the timer
    await loop.finish()                                  // fails if an effect still runs or an event went unasserted
}
// snippet.end

// snippet.xctest
import FeedbackLoopTesting
import XCTest

final class MetronomeTests: XCTestCase {
    func testTicksWhileRunning() async {
        let clock = TestClock()
        let loop = TestLoop(
            initial: Metronome.State(), reduce: Metronome.reduce,
            feedbacks: Metronome.feedbacks(clock: clock), backend: .actor)
        await loop.send(.start) { $0.isRunning = true }
        await loop.advance(clock, by: .seconds(1))
        await loop.receive(.tick) { $0.ticks = 1 }
        await loop.send(.stop) { $0.isRunning = false }
        await loop.finish()
    }
}
// snippet.end

/// The README's failing example: what a wrong assertion reports.
@Test func metronomeWithAWrongAssertionFails() async {
    let clock = TestClock()
    let loop = TestLoop(
        initial: Metronome.State(), reduce: Metronome.reduce, feedbacks: Metronome.feedbacks(clock: clock))
    await loop.send(.start) { $0.isRunning = true }
    await loop.advance(clock, by: .seconds(1))
    await withKnownIssue {
        // snippet.failing
        await loop.receive(.tick) { $0.ticks = 2 }
        // snippet.end
    } matching: { issue in
        let text = issue.comments.map(\.rawValue).joined()
        return text.hasPrefix("State mismatch: receiving Metronome.Event.tick\n")
            && text.contains("−   ticks: 2,") && text.contains("+   ticks: 1,")
    }
    await loop.send(.stop) { $0.isRunning = false }
    await loop.finish()
}
