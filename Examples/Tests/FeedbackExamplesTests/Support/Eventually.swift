import Testing

/// A condition that did not come true in time; the test has already recorded an issue.
struct WaitTimedOut: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Waits, yielding between checks, until `condition` holds; records an issue and throws after
/// `limit` of wall time. For conditions on recorders and clocks that a test cannot await
/// directly; never a substitute for `waitUntilIdle()` where the loop can become idle.
func eventually(
    _ what: String,
    within limit: Duration = .seconds(60),
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () -> Bool
) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + limit
    while !condition() {
        if clock.now >= deadline {
            Issue.record("timed out after \(limit) waiting for \(what)", sourceLocation: sourceLocation)
            throw WaitTimedOut(what: what)
        }
        await Task.yield()
    }
}
