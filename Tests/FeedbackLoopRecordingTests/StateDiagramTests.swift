import FeedbackLoop
import FeedbackLoopRecording
import Testing

@Suite(.timeLimit(.minutes(5))) struct StateDiagramTests {
    /// A run that fails, retries, loads, adds twice: every move once, in the order first made.
    @Test(arguments: Backend.allCases)
    func aRunBecomesAMermaidAndADotDiagram(backend: Backend) async {
        let log = TransitionLog<Basket.State, Basket.Event>()
        let loop = Loop(
            initial: .loading,
            reduce: Basket.reduce,
            feedbacks: Basket.feedbacks { attempt in
                guard attempt > 1 else { throw Basket.Offline() }
                return []
            },
            backend: backend,
            instrumentation: log.instrumentation)
        await loop.waitUntilIdle()
        for event: Basket.Event in [.ui(.retry), .ui(.add("milk")), .ui(.add("eggs")), .ui(.retry)] {
            loop.send(event)
            await loop.waitUntilIdle()
        }
        await loop.stop()

        let diagram = StateDiagram(log.transitions, eventName: { CaseName.path(of: $0) })
        #expect(diagram.mermaid == """
            stateDiagram-v2
                [*] --> loading
                loading --> loadingFailed: failed
                loadingFailed --> loading: ui.retry
                loading --> loaded: loaded
                loaded --> adding: ui.add
                adding --> loaded: added

            """)
        #expect(diagram.dot == """
            digraph StateDiagram {
                rankdir=LR;
                node [shape=box, style=rounded];
                "loading";
                "loadingFailed";
                "loaded";
                "adding";
                "[*]" [shape=point, label=""];
                "[*]" -> "loading";
                "loading" -> "loadingFailed" [label="failed"];
                "loadingFailed" -> "loading" [label="ui.retry"];
                "loading" -> "loaded" [label="loaded"];
                "loaded" -> "adding" [label="ui.add"];
                "adding" -> "loaded" [label="added"];
            }

            """)
    }

    @Test func ignoredEventsAreNotEdgesButChangesWithinACaseAre() {
        let transitions: [Transition<Basket.State, Basket.Event>] = [
            Transition(before: .loaded([]), event: .ui(.retry), after: .loaded([])),
            Transition(before: .loaded([]), event: .added("x"), after: .loaded(["x"])),
        ]
        #expect(StateDiagram(transitions).edges == [StateDiagram.Edge(from: "loaded", to: "loaded", event: "added")])
        #expect(StateDiagram(transitions).initial == "loaded")
    }

    @Test func aStateThatIsNotEquatableKeepsEveryTransition() {
        struct Phase: Sendable { var name: String }
        let transitions = [Transition(before: Phase(name: "a"), event: Basket.Action.retry, after: Phase(name: "a"))]
        let diagram = StateDiagram(transitions, stateName: \.name)
        #expect(diagram.edges == [StateDiagram.Edge(from: "a", to: "a", event: "retry")])
    }

    @Test func diagramsOfSeveralRunsMerge() {
        let first = StateDiagram(initial: "idle", edges: [.init(from: "idle", to: "busy", event: "start")])
        let second = StateDiagram(initial: "idle", edges: [
            .init(from: "idle", to: "busy", event: "start"),
            .init(from: "busy", to: "idle", event: "stop"),
        ])
        let merged = first.merging(second)
        #expect(merged.initial == "idle")
        #expect(merged.states == ["idle", "busy"])
        #expect(merged.edges.map(\.event) == ["start", "stop"])
    }

    @Test func namesThatAreNotIdentifiersStayReadable() {
        let diagram = StateDiagram(
            initial: "showing directions",
            edges: [.init(from: "showing directions", to: "loaded \"ok\"", event: "ui; close")])
        #expect(diagram.mermaid == """
            stateDiagram-v2
                state "showing directions" as showing_directions
                state "loaded 'ok'" as loaded__ok_
                [*] --> showing_directions
                showing_directions --> loaded__ok_: ui  close

            """)
        #expect(diagram.dot.contains(#""showing directions" -> "loaded \"ok\"" [label="ui; close"];"#))
    }

    @Test func anEmptyRunHasOnlyItsStart() {
        let diagram = StateDiagram([Transition<Basket.State, Basket.Event>](), initial: .loading)
        #expect(diagram.mermaid == "stateDiagram-v2\n    [*] --> loading\n")
    }
}
