#if Testing
import Clocks
import IssueReporting

extension TestLoop {
    /// Advances `clock` by `duration` once something is asleep on it — the safe way to drive a
    /// timer effect.
    ///
    /// A plain `clock.advance(by:)` races with the effect it means to wake: right after the test
    /// received a tick, the timer's task may not have gone back to sleep yet, and an advance
    /// that finds no sleeper just moves time while the effect then sleeps a full period more.
    /// This waits (yielding, up to ``timeout`` of wall time) until the clock has a pending
    /// sleep, then advances. If nothing goes to sleep in that time it fails the test and
    /// advances anyway.
    ///
    /// With several effects asleep on the same clock it only knows that one of them is; use it
    /// when one timer runs, and plain `advance(by:)` to move time when no effect should be
    /// waiting (to show that nothing happens).
    ///
    /// - Parameters:
    ///   - clock: The clock the feedbacks under test sleep on.
    ///   - duration: How far to move it.
    ///   - fileID: Where a failure is reported; leave the default.
    ///   - filePath: Where a failure is reported; leave the default.
    ///   - line: Where a failure is reported; leave the default.
    ///   - column: Where a failure is reported; leave the default.
    nonisolated(nonsending) public func advance(
        _ clock: TestClock<Swift.Duration>,
        by duration: Swift.Duration,
        fileID: StaticString = #fileID,
        filePath: StaticString = #filePath,
        line: UInt = #line,
        column: UInt = #column
    ) async {
        let wait = timeout
        let deadline = ContinuousClock.now.advanced(by: wait)
        while true {
            do {
                // Throws once a sleep is pending; returns (after yielding) while none is.
                try await clock.checkSuspension()
            } catch {
                break
            }
            if ContinuousClock.now >= deadline {
                CallSite(fileID: fileID, filePath: filePath, line: line, column: column).fail(
                    "Nothing asleep on the clock: waited \(wait) before advancing it by \(duration)",
                    "Nothing went to sleep on the clock within \(wait); advancing it anyway.")
                break
            }
        }
        await clock.advance(by: duration)
    }
}
#endif
