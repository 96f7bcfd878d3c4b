import FeedbackExamples
import FeedbackLoop
import Testing

private typealias F = Fixtures

/// The article's flows end to end, on a running loop with the fake service.
@Suite("Pharmacies: the article's flows on both backends")
struct PharmaciesFlowTests {
    struct Screen {
        let loop: Loop<Pharmacies.State, Pharmacies.Event>
        let recorder = Recorder<Pharmacies.State, Pharmacies.Event>()
        let service: FakePharmaciesService

        init(_ backend: Backend, service: FakePharmaciesService) {
            self.service = service
            self.loop = Pharmacies.makeLoop(
                environment: .init(service: service), backend: backend, instrumentation: recorder.instrumentation)
        }

        /// Sends a user action and waits until every effect it caused has played out.
        func tap(_ action: Pharmacies.Action) async throws {
            try await loop.sendAndWait(.ui(action))
            await loop.waitUntilIdle()
        }

        func send(_ event: Pharmacies.Event) async throws {
            try await loop.sendAndWait(event)
            await loop.waitUntilIdle()
        }

        var calls: [FakeCall<FakePharmaciesService.Operation>] { service.server.calls }
    }

    /// A screen that loaded the two saved pharmacies.
    func loadedScreen(_ backend: Backend, failing: [FakePharmaciesService.Operation: Int] = [:]) async throws -> Screen {
        let screen = Screen(backend, service: FakePharmaciesService(saved: F.saved, failing: failing))
        await screen.loop.waitUntilIdle()
        #expect(screen.loop.state == .loaded(F.saved, nil))
        return screen
    }

    @Test("opening the screen loads the saved pharmacies", arguments: Backend.allCases)
    func load(_ backend: Backend) async throws {
        let screen = try await loadedScreen(backend)
        #expect(screen.recorder.states == [.loaded(F.saved, nil)])
        #expect(screen.calls == [FakeCall(operation: .fetch, outcome: .succeeded)])
    }

    @Test("loading fails, retry loads", arguments: Backend.allCases)
    func loadFailsThenRetry(_ backend: Backend) async throws {
        let screen = Screen(backend, service: FakePharmaciesService(saved: F.saved, failing: [.fetch: 1]))
        await screen.loop.waitUntilIdle()
        guard case .loadingFailed = screen.loop.state else {
            Issue.record("expected loading failed, got \(screen.loop.state)")
            return
        }
        try await screen.tap(.retry)
        #expect(screen.loop.state == .loaded(F.saved, nil))
        #expect(screen.calls.map(\.outcome) == [.failed, .succeeded])
    }

    @Test("add → the save fails → alert → back to the list, then add succeeds", arguments: Backend.allCases)
    func addFailsThenSucceeds(_ backend: Backend) async throws {
        let screen = try await loadedScreen(backend, failing: [.add: 1])
        try await screen.tap(.addPharmacy)
        #expect(screen.loop.state == .searching(F.saved))
        try await screen.send(.didSelectPlace(.selected(F.superdrugPlace)))
        let error = PharmaciesError(FakeServiceError(operation: "add"))
        #expect(
            Array(screen.recorder.states.suffix(4)) == [
                .searching(F.saved),
                .adding(F.saved, F.superdrug),
                .loaded(F.saved, error),
                .loaded(F.saved, nil),
            ])
        #expect(screen.service.savedPharmacies == F.saved)

        try await screen.tap(.addPharmacy)
        try await screen.send(.didSelectPlace(.selected(F.superdrugPlace)))
        #expect(screen.loop.state == .loaded(F.saved + [F.superdrug], nil))
        #expect(screen.service.savedPharmacies == F.saved + [F.superdrug])
    }

    @Test("the routes: show map, then the alert of the failed save, each once", arguments: Backend.allCases)
    func routesOfAFailedAdd(_ backend: Backend) async throws {
        let screen = try await loadedScreen(backend, failing: [.add: 1])
        var routes = Pharmacies.routes(of: screen.loop).makeAsyncIterator()
        try await screen.tap(.addPharmacy)
        try await screen.send(.didSelectPlace(.selected(F.superdrugPlace)))
        try await screen.tap(.select(0, .dismiss))
        #expect(await routes.next() == .showMap)
        #expect(await routes.next() == .showAlert(PharmaciesError(FakeServiceError(operation: "add"))))
        #expect(await routes.next() == .dismiss(selected: F.boots))
        await screen.loop.stop()
        #expect(await routes.next() == nil)
    }

    @Test("closing the map without a pick goes back to the list", arguments: Backend.allCases)
    func closeMap(_ backend: Backend) async throws {
        let screen = try await loadedScreen(backend)
        try await screen.tap(.addPharmacy)
        try await screen.send(.didSelectPlace(.cancelled))
        #expect(screen.loop.state == .loaded(F.saved, nil))
        #expect(!screen.service.server.started.contains(.add))
    }

    @Test("picking a pharmacy already on the list is ignored", arguments: Backend.allCases)
    func addAlreadyListed(_ backend: Backend) async throws {
        let screen = try await loadedScreen(backend)
        try await screen.tap(.addPharmacy)
        try await screen.send(.didSelectPlace(.selected(F.bootsPlace)))
        #expect(screen.loop.state == .loaded(F.saved, nil))
        #expect(!screen.recorder.states.contains { if case .adding = $0 { true } else { false } })
        #expect(!screen.service.server.started.contains(.add))
    }

    @Test("delete with failure keeps the pharmacy; delete again removes it", arguments: Backend.allCases)
    func deleteFailsThenSucceeds(_ backend: Backend) async throws {
        let screen = try await loadedScreen(backend, failing: [.delete: 1])
        try await screen.tap(.deletePharmacy(0))
        let error = PharmaciesError(FakeServiceError(operation: "delete"))
        #expect(
            Array(screen.recorder.states.suffix(3)) == [
                .deleting(F.saved, 0), .loaded(F.saved, error), .loaded(F.saved, nil),
            ])
        #expect(screen.service.savedPharmacies == F.saved)

        try await screen.tap(.deletePharmacy(0))
        #expect(screen.loop.state == .loaded([F.dayLewis], nil))
        #expect(screen.service.savedPharmacies == [F.dayLewis])
    }

    @Test("select → dismiss with the pharmacy", arguments: Backend.allCases)
    func selectDismisses(_ backend: Backend) async throws {
        let screen = try await loadedScreen(backend)
        try await screen.tap(.select(1, .dismiss))
        #expect(screen.loop.state == .dismissing(.loaded(F.saved, nil), F.dayLewis))
        #expect(Pharmacies.route(for: screen.loop.state) == .dismiss(selected: F.dayLewis))
        try await screen.tap(.addPharmacy)
        #expect(screen.loop.state == .dismissing(.loaded(F.saved, nil), F.dayLewis), "dismissing is final")
    }

    @Test("show directions → back to the list", arguments: Backend.allCases)
    func directions(_ backend: Backend) async throws {
        let screen = try await loadedScreen(backend)
        try await screen.tap(.select(0, .showDirections))
        #expect(
            Array(screen.recorder.states.suffix(2)) == [
                .showingDirections(F.saved, F.boots.place!), .loaded(F.saved, nil),
            ])
    }

    @Test("cancel while loading dismisses with nothing and cancels the fetch", arguments: Backend.allCases)
    func cancelWhileLoading(_ backend: Backend) async throws {
        let clock = SleepCountingClock()
        let screen = Screen(backend, service: FakePharmaciesService(saved: F.saved, latency: .seconds(1), clock: clock))
        try await clock.waitForSleeps(started: 1)
        try await screen.tap(.cancel)
        #expect(screen.loop.state == .dismissing(.loading, nil))
        #expect(screen.calls == [FakeCall(operation: .fetch, outcome: .cancelled)])
        await clock.advance(by: .seconds(5))
        await screen.loop.waitUntilIdle()
        #expect(screen.loop.state == .dismissing(.loading, nil), "a late answer cannot land")
    }

    @Test("cancel after loading failed dismisses with nothing", arguments: Backend.allCases)
    func cancelAfterFailure(_ backend: Backend) async throws {
        let screen = Screen(backend, service: FakePharmaciesService(failing: [.fetch: 1]))
        await screen.loop.waitUntilIdle()
        let failed = screen.loop.state
        try await screen.tap(.cancel)
        #expect(screen.loop.state == .dismissing(failed, nil))
        #expect(Pharmacies.route(for: screen.loop.state) == .dismiss(selected: nil))
    }

    @Test("the service's latency shows as the adding state until the save answers", arguments: Backend.allCases)
    func addingLastsTheLatency(_ backend: Backend) async throws {
        let clock = SleepCountingClock()
        let service = FakePharmaciesService(saved: F.saved, latency: .milliseconds(200), clock: clock)
        let screen = Screen(backend, service: service)
        try await clock.waitForSleeps(started: 1)
        await clock.advance(by: .milliseconds(200))
        await screen.loop.waitUntilIdle()
        try await screen.loop.sendAndWait(.ui(.addPharmacy))
        #expect(try await screen.loop.sendAndWait(.didSelectPlace(.selected(F.superdrugPlace))) == .adding(F.saved, F.superdrug))
        try await clock.waitForSleeps(started: 2)
        await clock.advance(by: .milliseconds(199))
        #expect(screen.recorder.last == .adding(F.saved, F.superdrug))
        await clock.advance(by: .milliseconds(1))
        await screen.loop.waitUntilIdle()
        #expect(screen.loop.state == .loaded(F.saved + [F.superdrug], nil))
    }
}
