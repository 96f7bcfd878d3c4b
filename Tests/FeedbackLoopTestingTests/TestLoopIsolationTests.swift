import FeedbackLoop
import FeedbackLoopTesting
import Testing

/// A test loop is used the same way from a main-actor test (an app's view-model tests) as from
/// a nonisolated one.
@Suite(.timeLimit(.minutes(5))) struct TestLoopIsolationTests {
    @MainActor final class Expectations {
        var attempts = 1
    }

    @Test(arguments: Backend.allCases) @MainActor
    func aMainActorTestCanAssertWithItsOwnState(backend: Backend) async {
        let expected = Expectations()
        let loop = Loader.testLoop(backend: backend)
        await loop.send(.load) {
            $0.phase = .loading
            $0.attempts = expected.attempts
        }
        await loop.receive(.loaded(["Boots"])) { $0.phase = .loaded(["Boots"]) }
        await loop.finish()
    }
}
