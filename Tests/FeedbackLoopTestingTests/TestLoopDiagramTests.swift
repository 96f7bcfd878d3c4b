import FeedbackLoop
import FeedbackLoopRecording
import FeedbackLoopTesting
import Testing

/// A test run is also a diagram of the scenario it walked through.
@Suite(.timeLimit(.minutes(5))) struct TestLoopDiagramTests {
    @Test(arguments: Backend.allCases)
    func aTestRunDrawsItsStateDiagram(backend: Backend) async {
        let loop = TestLoop(
            initial: Loader.State(), reduce: Loader.reduce,
            feedbacks: Loader.feedbacks { attempt in
                guard attempt > 1 else { throw Loader.ServiceError() }
                return ["Boots"]
            },
            backend: backend, timeout: suiteTimeout)
        await loop.send(.load) {
            $0.phase = .loading
            $0.attempts = 1
        }
        await loop.receive(.failed("offline")) { $0.phase = .failed("offline") }
        await loop.send(.load) {
            $0.phase = .loading
            $0.attempts = 2
        }
        await loop.receive(.loaded(["Boots"])) { $0.phase = .loaded(["Boots"]) }
        await loop.finish()

        let diagram = StateDiagram(loop.transitions, stateName: { CaseName.of($0.phase) })
        #expect(diagram.mermaid == """
            stateDiagram-v2
                [*] --> idle
                idle --> loading: load
                loading --> failed: failed
                failed --> loading: load
                loading --> loaded: loaded

            """)
    }
}
