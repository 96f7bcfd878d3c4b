import Clocks
import FeedbackExamples
import FeedbackLoop
import FeedbackLoopRecording
import FeedbackLoopTesting
import Foundation
import Testing

private typealias F = Fixtures

/// The article's flows, each asserted step by step with an exhaustive `TestLoop`, and the state
/// diagram they draw together, which must be the one committed in the examples' README.
///
/// The diagram is regenerated, instead of compared, when `FEEDBACKLOOP_UPDATE_DIAGRAM=1`:
///
/// ```
/// FEEDBACKLOOP_UPDATE_DIAGRAM=1 swift test --filter PharmaciesDiagramTests
/// ```
@Suite("Pharmacies: the article's state diagram, drawn from its flows")
struct PharmaciesDiagramTests {
    typealias Transitions = [Transition<Pharmacies.State, Pharmacies.Event>]
    typealias Flow = @Sendable (Backend) async -> Transitions

    static let fetchError = PharmaciesError(FakeServiceError(operation: "fetch"))
    static let addError = PharmaciesError(FakeServiceError(operation: "add"))
    static let deleteError = PharmaciesError(FakeServiceError(operation: "delete"))

    // MARK: The flows

    static func makeLoop(
        _ backend: Backend, _ service: FakePharmaciesService
    ) -> TestLoop<Pharmacies.State, Pharmacies.Event> {
        TestLoop(
            initial: Pharmacies.initialState,
            reduce: Pharmacies.reduce,
            feedbacks: Pharmacies.feedbacks(.init(service: service)),
            backend: backend, timeout: exampleTimeout)
    }

    /// A loop that has loaded the two saved pharmacies.
    static func loadedLoop(
        _ backend: Backend, failing: [FakePharmaciesService.Operation: Int] = [:]
    ) async -> TestLoop<Pharmacies.State, Pharmacies.Event> {
        let loop = makeLoop(backend, FakePharmaciesService(saved: F.saved, failing: failing))
        await loop.receive(.didLoad(F.saved)) { $0 = .loaded(F.saved, nil) }
        return loop
    }

    static func load(_ backend: Backend) async -> Transitions {
        let loop = await loadedLoop(backend)
        await loop.finish()
        return loop.transitions
    }

    static func loadFailsThenRetry(_ backend: Backend) async -> Transitions {
        let loop = makeLoop(backend, FakePharmaciesService(saved: F.saved, failing: [.fetch: 1]))
        await loop.receive(.didFail(fetchError)) { $0 = .loadingFailed(fetchError) }
        await loop.send(.ui(.retry)) { $0 = .loading }
        await loop.receive(.didLoad(F.saved)) { $0 = .loaded(F.saved, nil) }
        await loop.finish()
        return loop.transitions
    }

    static func addFailsThenSucceeds(_ backend: Backend) async -> Transitions {
        let loop = await loadedLoop(backend, failing: [.add: 1])
        await loop.send(.ui(.addPharmacy)) { $0 = .searching(F.saved) }
        await loop.send(.didSelectPlace(.selected(F.superdrugPlace))) { $0 = .adding(F.saved, F.superdrug) }
        // The article's `failed`: one step long, long enough to send the alert route.
        await loop.receive(.didFail(addError)) { $0 = .loaded(F.saved, addError) }
        await loop.receive(.didLoad(F.saved)) { $0 = .loaded(F.saved, nil) }

        await loop.send(.ui(.addPharmacy)) { $0 = .searching(F.saved) }
        await loop.send(.didSelectPlace(.selected(F.superdrugPlace))) { $0 = .adding(F.saved, F.superdrug) }
        await loop.receive(.didAdd(F.superdrug)) { $0 = .loaded(F.saved + [F.superdrug], nil) }
        await loop.finish()
        return loop.transitions
    }

    static func closeMapOrPickAListedOne(_ backend: Backend) async -> Transitions {
        let loop = await loadedLoop(backend)
        await loop.send(.ui(.addPharmacy)) { $0 = .searching(F.saved) }
        await loop.send(.didSelectPlace(.cancelled)) { $0 = .loaded(F.saved, nil) }
        await loop.send(.ui(.addPharmacy)) { $0 = .searching(F.saved) }
        // Already on the list: nothing to add, as in the article's `reduceSearching`.
        await loop.send(.didSelectPlace(.selected(F.bootsPlace))) { $0 = .loaded(F.saved, nil) }
        await loop.finish()
        return loop.transitions
    }

    static func deleteFailsThenSucceeds(_ backend: Backend) async -> Transitions {
        let loop = await loadedLoop(backend, failing: [.delete: 1])
        await loop.send(.ui(.deletePharmacy(0))) { $0 = .deleting(F.saved, 0) }
        await loop.receive(.didFail(deleteError)) { $0 = .loaded(F.saved, deleteError) }
        await loop.receive(.didLoad(F.saved)) { $0 = .loaded(F.saved, nil) }
        await loop.send(.ui(.deletePharmacy(0))) { $0 = .deleting(F.saved, 0) }
        await loop.receive(.didDelete) { $0 = .loaded([F.dayLewis], nil) }
        await loop.finish()
        return loop.transitions
    }

    static func selectDismisses(_ backend: Backend) async -> Transitions {
        let loop = await loadedLoop(backend)
        await loop.send(.ui(.select(1, .dismiss))) { $0 = .dismissing(.loaded(F.saved, nil), F.dayLewis) }
        // Dismissing is final.
        await loop.send(.ui(.addPharmacy))
        await loop.finish()
        return loop.transitions
    }

    static func directions(_ backend: Backend) async -> Transitions {
        let loop = await loadedLoop(backend)
        // Day Lewis has no known location: no directions, the list stays.
        await loop.send(.ui(.select(1, .showDirections)))
        await loop.send(.ui(.select(0, .showDirections))) { $0 = .showingDirections(F.saved, F.boots.place!) }
        await loop.receive(.didLoad(F.saved)) { $0 = .loaded(F.saved, nil) }
        await loop.finish()
        return loop.transitions
    }

    static func cancelWhileLoading(_ backend: Backend) async -> Transitions {
        let clock = TestClock()
        let service = FakePharmaciesService(saved: F.saved, latency: .seconds(1), clock: clock)
        let loop = makeLoop(backend, service)
        // Advancing by nothing only waits until the fetch is asleep on the clock, mid-call.
        await loop.advance(clock, by: .zero)
        await loop.send(.ui(.cancel)) { $0 = .dismissing(.loading, nil) }
        await clock.advance(by: .seconds(5))
        await loop.finish()
        #expect(service.server.calls == [FakeCall(operation: .fetch, outcome: .cancelled)])
        return loop.transitions
    }

    static func cancelAfterLoadingFailed(_ backend: Backend) async -> Transitions {
        let loop = makeLoop(backend, FakePharmaciesService(saved: F.saved, failing: [.fetch: 1]))
        await loop.receive(.didFail(fetchError)) { $0 = .loadingFailed(fetchError) }
        await loop.send(.ui(.cancel)) { $0 = .dismissing(.loadingFailed(fetchError), nil) }
        await loop.finish()
        return loop.transitions
    }

    static func cancelFromTheList(_ backend: Backend) async -> Transitions {
        let loop = await loadedLoop(backend)
        await loop.send(.ui(.cancel)) { $0 = .dismissing(.loaded(F.saved, nil), nil) }
        await loop.finish()
        return loop.transitions
    }

    /// Every flow, in the order the diagram lists what they reach first.
    static let flows: [(name: String, run: Flow)] = [
        ("load", load),
        ("load fails, retry", loadFailsThenRetry),
        ("add fails, add succeeds", addFailsThenSucceeds),
        ("close the map, pick a listed one", closeMapOrPickAListedOne),
        ("delete fails, delete succeeds", deleteFailsThenSucceeds),
        ("select for delivery", selectDismisses),
        ("show directions", directions),
        ("cancel while loading", cancelWhileLoading),
        ("cancel after loading failed", cancelAfterLoadingFailed),
        ("cancel from the list", cancelFromTheList),
    ]

    @Test("each flow, step by step", arguments: Backend.allCases, flows.indices)
    func flow(_ backend: Backend, _ index: Int) async {
        let transitions = await Self.flows[index].run(backend)
        #expect(transitions.first?.before == .loading, "\(Self.flows[index].name) starts loading")
    }

    // MARK: The diagram

    /// The article's state names; its `failed` is `loaded` with an error.
    static func stateName(_ state: Pharmacies.State) -> String {
        switch state {
        case .loading: "loading"
        case .loadingFailed: "loading failed"
        case .loaded(_, nil): "loaded"
        case .loaded(_, _?): "failed"
        case .searching: "searching"
        case .showingDirections: "showing directions"
        case .adding: "adding"
        case .deleting: "deleting"
        case .dismissing: "dismissing"
        }
    }

    /// Events by their case; user actions and map answers by the case they carry too.
    static func eventName(_ event: Pharmacies.Event) -> String {
        switch event {
        case .ui(.addPharmacy): "ui(addPharmacy)"
        case .ui(.deletePharmacy): "ui(deletePharmacy)"
        case .ui(.select(_, .dismiss)): "ui(select, dismiss)"
        case .ui(.select(_, .showDirections)): "ui(select, showDirections)"
        case .ui(.retry): "ui(retry)"
        case .ui(.cancel): "ui(cancel)"
        case .didLoad: "didLoad"
        case .didFail: "didFail"
        case .didSelectPlace(.selected): "didSelectPlace(selected)"
        case .didSelectPlace(.cancelled): "didSelectPlace(cancelled)"
        case .didAdd: "didAdd"
        case .didDelete: "didDelete"
        }
    }

    static func diagram(_ backend: Backend) async -> StateDiagram {
        var diagram = StateDiagram(initial: stateName(Pharmacies.initialState), edges: [])
        for flow in flows {
            diagram = diagram.merging(
                StateDiagram(await flow.run(backend), stateName: stateName, eventName: eventName))
        }
        return diagram
    }

    static let readme = URL(filePath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appending(components: "Sources", "FeedbackExamples", "README.md")
    static let begin = "<!-- pharmacies-diagram:begin -->\n```mermaid\n"
    static let end = "```\n<!-- pharmacies-diagram:end -->"

    @Test("the flows draw the diagram committed in the examples' README", arguments: Backend.allCases)
    func diagramInReadme(_ backend: Backend) async throws {
        let mermaid = await Self.diagram(backend).mermaid
        let text = try String(contentsOf: Self.readme, encoding: .utf8)
        guard let start = text.range(of: Self.begin), let stop = text.range(of: Self.end, range: start.upperBound..<text.endIndex)
        else {
            Issue.record("\(Self.readme.path) has no section between \(Self.begin.debugDescription) and \(Self.end.debugDescription)")
            return
        }
        let committed = String(text[start.upperBound..<stop.lowerBound])
        if ProcessInfo.processInfo.environment["FEEDBACKLOOP_UPDATE_DIAGRAM"] == "1" {
            if committed != mermaid {
                try text.replacingCharacters(in: start.upperBound..<stop.lowerBound, with: mermaid)
                    .write(to: Self.readme, atomically: true, encoding: .utf8)
            }
            return
        }
        #expect(
            committed == mermaid,
            "The diagram in README.md is out of date; regenerate it with FEEDBACKLOOP_UPDATE_DIAGRAM=1 swift test --filter PharmaciesDiagramTests")
    }
}
