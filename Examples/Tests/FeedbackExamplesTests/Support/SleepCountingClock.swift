import FeedbackLoop
import Testing

/// A manual clock that counts the sleeps on it, so a test can wait until an effect is really
/// asleep before advancing time.
///
/// A sleep counts as started, and as active, in the same locked step that puts it on the clock;
/// it stops being active in the step that takes it off (its deadline came, or it was cancelled).
/// So once ``waitForSleeps(started:active:sourceLocation:)`` returns, exactly the expected sleeps
/// are on the clock, and ``advance(by:)`` wakes each one whose deadline it reaches. (With
/// swift-clocks' `TestClock` underneath and the count taken just before its `sleep` call, a
/// sleep could be counted, then miss an `advance` that ended exactly on its deadline and wait
/// for one that never came: a test hang seen about once in a hundred runs of the whole suite.)
/// A sleep whose deadline has already come returns at once.
final class SleepCountingClock: Clock, Sendable {
    typealias Duration = Swift.Duration

    struct Instant: InstantProtocol {
        var offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var id: Int
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var started = 0
        var nextID = 0
        var sleepers: [Sleeper] = []

        mutating func remove(_ id: Int) -> Sleeper? {
            guard let index = sleepers.firstIndex(where: { $0.id == id }) else { return nil }
            return sleepers.remove(at: index)
        }
    }

    private let state = Lock(State())

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }

    /// Sleeps started so far.
    var started: Int { state.withLock { $0.started } }
    /// Sleeps on the clock now.
    var active: Int { state.withLock { $0.sleepers.count } }

    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let settled = state.withLock { state -> Result<Void, any Error>? in
                    // Cancelled before it got here: the handler below found nothing to take off.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.started += 1
                    if deadline <= state.now { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return nil
                }
                if let settled { continuation.resume(with: settled) }
            }
        } onCancel: {
            state.withLock { $0.remove(id) }?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Waits until `started` sleeps have started and exactly `active` are on the clock.
    func waitForSleeps(
        started: Int, active: Int = 1, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try await eventually("\(started) sleeps started, \(active) asleep", sourceLocation: sourceLocation) {
            state.withLock { $0.started == started && $0.sleepers.count == active }
        }
    }

    /// Moves time forward by `duration`, waking the sleeps it reaches in deadline order, each at
    /// its own deadline, and yielding after each so that the woken task can go on.
    func advance(by duration: Duration) async {
        let target = state.withLock { $0.now.advanced(by: duration) }
        while true {
            let next = state.withLock { state -> Sleeper? in
                guard let earliest = state.sleepers.min(by: { $0.deadline < $1.deadline }), earliest.deadline <= target
                else {
                    state.now = target
                    return nil
                }
                state.now = earliest.deadline
                return state.remove(earliest.id)
            }
            guard let next else { break }
            next.continuation.resume()
            await Task.yield()
        }
        await Task.yield()
    }
}
