/// Runs `body` in its turn: one at a time, across every test of the test process (every test
/// target's), for tests that block a thread on purpose. The turn is given back on every exit
/// path, so a test that fails (a missed deadline throws) fails alone instead of leaving every
/// later test waiting for a turn.
public func withBlockingTurn<T>(_ body: () async throws -> T) async rethrows -> T {
    await BlockingTurn.shared.acquire()
    do {
        let result = try await body()
        await BlockingTurn.shared.release()
        return result
    } catch {
        await BlockingTurn.shared.release()
        throw error
    }
}

/// The turn behind ``withBlockingTurn(_:)``: a module of its own so that the engine's tests and
/// the tracing tests, which `swift test` runs in one process and in parallel, take the same turn.
///
/// Holding an `actor` or `stream` loop's drain role means blocking one of the cooperative pool's
/// threads, and the pool has only as many threads as cores (two on the CI machine). Two such
/// tests at once, one from each target, would starve every other test, including the bodies that
/// end the holds; taking turns keeps at least one thread free.
public actor BlockingTurn {
    public static let shared = BlockingTurn()
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    public func acquire() async {
        if !busy {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    public func release() {
        if waiting.isEmpty {
            busy = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}
