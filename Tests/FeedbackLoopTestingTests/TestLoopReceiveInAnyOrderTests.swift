import FeedbackLoopTesting
import Testing

/// Events from effects that run side by side are received as a set, whatever order they came in.
@Suite(.timeLimit(.minutes(5))) struct TestLoopReceiveInAnyOrderTests {
    @Test(arguments: Backend.allCases)
    func eventsFromConcurrentEffectsAreReceivedInAnyOrder(backend: Backend) async {
        let releases = Downloads.Releases()
        let loop = TestLoop(
            initial: Downloads.State(), reduce: Downloads.reduce, feedbacks: Downloads.feedbacks(releases),
            backend: backend, timeout: suiteTimeout)
        await loop.send(.download([1, 2, 3])) { $0.pending = [1, 2, 3] }
        // The reverse of the order the test names them in.
        releases.release(3)
        await loop.loop.firstState { $0.done == [3] }
        releases.release(2)
        await loop.loop.firstState { $0.done == [2, 3] }
        releases.release(1)
        await loop.receive(inAnyOrder: [.downloaded(1), .downloaded(2), .downloaded(3)]) {
            $0.pending = []
            $0.done = [1, 2, 3]
        }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func theCombinedChangeIsChecked(backend: Backend) async {
        let releases = Downloads.Releases()
        let loop = TestLoop(
            initial: Downloads.State(), reduce: Downloads.reduce, feedbacks: Downloads.feedbacks(releases),
            backend: backend, timeout: suiteTimeout)
        await loop.send(.download([1, 2])) { $0.pending = [1, 2] }
        releases.release(2)
        releases.release(1)
        await expectIssues(mentioning: "State mismatch", "done") {
            await loop.receive(inAnyOrder: [.downloaded(1), .downloaded(2)]) {
                $0.pending = []
                $0.done = [1]
            }
        }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func anEventThatIsNotAmongThemFailsAsUnexpected(backend: Backend) async {
        let releases = Downloads.Releases()
        let loop = TestLoop(
            initial: Downloads.State(), reduce: Downloads.reduce, feedbacks: Downloads.feedbacks(releases),
            backend: backend, timeout: suiteTimeout)
        await loop.send(.download([1, 2])) { $0.pending = [1, 2] }
        releases.release(2)
        await expectIssues(mentioning: "Unexpected event: Downloads.Event.downloaded(2)") {
            await loop.receive(inAnyOrder: [.downloaded(1), .downloaded(3)]) { _ in }
        }
        releases.release(1)
        await loop.receive(.downloaded(1)) {
            $0.pending = []
            $0.done = [1, 2]
        }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func aMissingEventFailsSayingWhatArrivedAndHowLongItWaited(backend: Backend) async {
        let releases = Downloads.Releases()
        let loop = TestLoop(
            initial: Downloads.State(), reduce: Downloads.reduce, feedbacks: Downloads.feedbacks(releases),
            backend: backend, timeout: suiteTimeout)
        await loop.send(.download([1, 2])) { $0.pending = [1, 2] }
        releases.release(1)
        await expectIssues(
            mentioning: "Event not received: waited 0.05 seconds for 2 event(s) in any order",
            "only Downloads.Event.downloaded(1) arrived", "\"downloads\" (effect"
        ) {
            await loop.receive(inAnyOrder: [.downloaded(1), .downloaded(2)], timeout: .milliseconds(50)) { _ in }
        }
        // Nothing was taken: the event that did arrive is still there to receive.
        await loop.receive(.downloaded(1)) {
            $0.pending = [2]
            $0.done = [1]
        }
        releases.release(2)
        await loop.receive(.downloaded(2)) {
            $0.pending = []
            $0.done = [1, 2]
        }
        await loop.finish()
    }
}
