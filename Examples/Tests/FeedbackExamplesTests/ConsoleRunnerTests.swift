import FeedbackExamples
import FeedbackLoop
import Synchronization
import Testing

/// The transcripts `feedback-examples` prints, played through the same runner with no latency.
@Suite("Console: default scripts, transcripts and bad input")
struct ConsoleRunnerTests {
    final class Output: Sendable {
        private let lines = Lock<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        var text: String { all.joined(separator: "\n") }
        @Sendable func write(_ line: String) { lines.withLock { $0.append(line) } }
    }

    func play<Feature: ExampleFeature>(
        _ scenario: ConsoleScenario<Feature>, _ backend: Backend, lines: [String]? = nil
    ) async -> (ConsoleRunner<Feature>.Summary, Output) {
        let output = Output()
        let runner = ConsoleRunner(scenario: scenario, backend: backend, output: output.write)
        let input = AsyncStream<String> { continuation in
            for line in lines ?? scenario.script { continuation.yield(line) }
            continuation.finish()
        }
        return (await runner.run(input), output)
    }

    @Test("the pharmacies script walks the article's flows", arguments: Backend.allCases)
    func pharmaciesScript(_ backend: Backend) async {
        let (summary, output) = await play(Pharmacies.consoleScenario(latency: .zero), backend)
        #expect(summary.rejectedActions == 0)
        let superdrug = Pharmacy(FakePharmaciesService.sampleMapPlaces[1])
        #expect(summary.finalState == .dismissing(.loaded([Fixtures.boots, superdrug], nil), superdrug))
        let text = output.text
        for expected in [
            "= loading failed", "→ route: show map", "→ route: show alert \"the service is unavailable (add failed)\"",
            "→ route: show alert \"the service is unavailable (delete failed)\"", "→ route: show directions to Boots",
            "→ route: dismiss with Superdrug", "(ignored: no change)", "| 1. Boots Piccadilly",
        ] {
            #expect(text.contains(expected), "transcript lacks \(expected):\n\(text)")
        }
    }

    @Test("the paging script loads every page through a failure", arguments: Backend.allCases)
    func pagingScript(_ backend: Backend) async {
        let (summary, output) = await play(MoviePaging.consoleScenario(latency: .zero), backend)
        #expect(summary.rejectedActions == 0)
        #expect(summary.finalState.context.movies.count == 12)
        #expect(output.text.contains("error: page 3 failed"))
    }

    @Test("the login script ends on the injected failure", arguments: Backend.allCases)
    func loginScript(_ backend: Backend) async {
        let (summary, output) = await play(Login.consoleScenario(latency: .zero), backend)
        #expect(summary.rejectedActions == 0)
        #expect(summary.finalState.status == .failed(String(describing: FakeServiceError(operation: "login"))))
        #expect(output.text.contains("status \"Unauthorized\""))
        #expect(output.text.contains("status \"Success\""))
    }

    @Test("the counter and play catch scripts", arguments: Backend.allCases)
    func smallScripts(_ backend: Backend) async {
        let (counter, _) = await play(Counter.consoleScenario(), backend)
        #expect(counter.finalState == Counter.State(count: 2))
        // The script's "throw; throw" relies on the second throw arriving while the machine holds
        // the ball: with no delay at all, the machine could throw back in between on a busy machine.
        let (playCatch, output) = await play(PlayCatch.consoleScenario(machineDelay: .milliseconds(200)), backend)
        #expect(playCatch.rejectedActions == 0)
        #expect(playCatch.finalState == .humanHasIt)
        #expect(output.all.filter { $0.hasPrefix("  ← throw to the human") }.count == 2)
    }

    @Test("unknown actions and bad arguments are reported, counted and skipped", arguments: Backend.allCases)
    func badInput(_ backend: Backend) async {
        let (summary, output) = await play(
            Pharmacies.consoleScenario(latency: .zero), backend,
            lines: ["frob", "delete x", "wait soon", "fail everything", "pick 9", "add; frob   # two on a line", "quit", "cancel"])
        #expect(summary.rejectedActions == 6)
        #expect(summary.finalState == .searching(FakePharmaciesService.sampleSaved), "quit stops before cancel")
        let errors = output.all.filter { $0.hasPrefix("  ! ") }
        #expect(
            errors == [
                "  ! unknown action 'frob'; type 'help' for the actions",
                "  ! 'delete' needs one number from 1, as in 'delete 1'; type 'help' for the actions",
                "  ! 'wait' needs a number of milliseconds, as in 'wait 500'; type 'help' for the actions",
                "  ! 'fail' needs one of: fetch, add, delete; type 'help' for the actions",
                "  ! the map has places 1 to 3: 1. Boots Piccadilly, 2. Superdrug, 3. Well Pharmacy; type 'help' for the actions",
                "  ! unknown action 'frob'; type 'help' for the actions",
            ])
    }

    @Test("every scenario's help lists its actions and the common ones")
    func help() {
        let helps = [
            Pharmacies.consoleScenario().help, MoviePaging.consoleScenario().help, TrafficLight.consoleScenario().help,
            Login.consoleScenario().help, Counter.consoleScenario().help, PlayCatch.consoleScenario().help,
        ]
        for help in helps {
            #expect(help.contains("wait <ms>"))
            #expect(help.contains("quit"))
        }
        #expect(helps[0].contains("pick <n>"))
        #expect(helps[2].contains("next"))
    }

    @Test("traffic light actions parse; anything else is rejected")
    func trafficLightParse() throws {
        let scenario = TrafficLight.consoleScenario()
        guard case .send(.next) = try scenario.parse(["next"]) else {
            Issue.record("'next' should send .next")
            return
        }
        #expect(throws: ConsoleInputError.unknownAction(["red"])) { try scenario.parse(["red"]) }
        #expect(throws: ConsoleInputError("'next' takes no argument")) { try scenario.parse(["next", "2"]) }
    }
}
