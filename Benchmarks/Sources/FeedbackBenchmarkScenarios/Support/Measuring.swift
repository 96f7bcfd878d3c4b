import FeedbackLoop

/// Reports progress, one line at a time; the command line prints it on stderr.
public typealias Progress = @Sendable (String) -> Void

/// The median of `repetitions` runs of `body`. A median, not a best or mean: one run that a
/// neighbour's build slowed down neither flatters nor drags the figure.
func median(
    of repetitions: Int,
    _ body: () async throws -> Double
) async rethrows -> Double {
    var samples: [Double] = []
    for _ in 0..<Swift.max(1, repetitions) {
        samples.append(try await body())
    }
    samples.sort()
    return samples[samples.count / 2]
}

/// The lowest of `repetitions` runs of `body`: a limit's figure. A limit is the floor of its
/// work, and a run the neighbours' load slowed down is no floor; the backends' figures stay
/// medians.
func best(
    of repetitions: Int,
    _ body: () async throws -> Double
) async rethrows -> Double {
    var best = Double.infinity
    for _ in 0..<Swift.max(1, repetitions) {
        best = Swift.min(best, try await body())
    }
    return best
}

/// Polls `condition` until it holds, failing with ``ScenarioFailure`` after `seconds`. Used only
/// where a benchmark must wait for work it cannot be told about (effect bodies beginning on the
/// pool); a result that never comes fails the run instead of hanging it.
func waitUntil(
    seconds: Double = 60,
    _ what: @autoclosure () -> String,
    _ condition: () -> Bool
) async throws {
    let deadline = Nanoseconds.now() + UInt64(seconds * 1e9)
    while !condition() {
        guard Nanoseconds.now() < deadline else {
            throw ScenarioFailure("timed out after \(seconds) s waiting for \(what())")
        }
        try? await Task.sleep(for: .microseconds(200))
    }
}

/// Waits until `loop` has published the reduction of `events` events. `sendAndWait` returns as
/// soon as its event is reduced, while `state` and `statistics` are published at the end of the
/// batch, a moment later on the actor backend; checks read them only after this.
func settle<State, Event>(_ loop: Loop<State, Event>, reduced events: Int) async throws {
    try await waitUntil(seconds: 10, "\(events) events to be published") { loop.statistics.eventsReduced >= events }
}
