import FeedbackExamples
import Foundation
import Testing

private typealias F = Fixtures

@Suite("Pharmacies: routes derived from state, and the pure renderer")
struct PharmaciesRouteAndRenderTests {
    static let list = F.saved

    @Test("each state asks for the article's route")
    func routes() {
        #expect(Pharmacies.route(for: .loading) == nil)
        #expect(Pharmacies.route(for: .loadingFailed(F.offline)) == nil)
        #expect(Pharmacies.route(for: .loaded(Self.list, nil)) == nil)
        #expect(Pharmacies.route(for: .loaded(Self.list, F.offline)) == .showAlert(F.offline))
        #expect(Pharmacies.route(for: .searching(Self.list)) == .showMap)
        #expect(Pharmacies.route(for: .showingDirections(Self.list, F.boots.place!)) == .showDirections(F.boots.place!))
        #expect(Pharmacies.route(for: .adding(Self.list, F.superdrug)) == nil)
        #expect(Pharmacies.route(for: .deleting(Self.list, 0)) == nil)
        #expect(Pharmacies.route(for: .dismissing(.loading, nil)) == .dismiss(selected: nil))
        #expect(Pharmacies.route(for: .dismissing(.loaded(Self.list, nil), F.boots)) == .dismiss(selected: F.boots))
    }

    @Test("loading shows a spinner and only Cancel")
    func loadingScreen() {
        let screen = Pharmacies.render(.loading)
        #expect(screen.buttons == ["Cancel"])
        guard case .spinner = screen.body else {
            Issue.record("expected a spinner, got \(screen.body)")
            return
        }
    }

    @Test("loading failed shows the error and a Retry button")
    func loadingFailedScreen() {
        let screen = Pharmacies.render(.loadingFailed(F.offline))
        guard case .placeholder(_, let message, let button) = screen.body else {
            Issue.record("expected a placeholder, got \(screen.body)")
            return
        }
        #expect(message.contains("offline"))
        #expect(button == "Retry")
    }

    @Test("an empty list shows the empty state with an Add button")
    func emptyScreen() {
        let screen = Pharmacies.render(.loaded([], nil))
        guard case .placeholder(_, _, let button) = screen.body else {
            Issue.record("expected a placeholder, got \(screen.body)")
            return
        }
        #expect(button == "Add pharmacy")
        #expect(Pharmacies.render(.searching([])) == screen)
    }

    @Test("the list shows one row per pharmacy; adding shows the new one pending; deleting hides the deleted one")
    func listScreens() {
        let rows = Self.list.map { Pharmacies.Screen.Row(name: $0.name, address: $0.address) }
        #expect(Pharmacies.render(.loaded(Self.list, nil)).body == .list(rows))
        #expect(Pharmacies.render(.loaded(Self.list, F.offline)).body == .list(rows))
        #expect(Pharmacies.render(.showingDirections(Self.list, F.boots.place!)).body == .list(rows))
        let pending = Pharmacies.Screen.Row(name: F.superdrug.name, address: F.superdrug.address, isPending: true)
        #expect(Pharmacies.render(.adding(Self.list, F.superdrug)).body == .list(rows + [pending]))
        #expect(Pharmacies.render(.deleting(Self.list, 0)).body == .list([rows[1]]))
    }

    @Test("dismissing renders exactly the screen it was dismissed from")
    func dismissingScreen() {
        for state: Pharmacies.State in [.loading, .loadingFailed(F.offline), .loaded(Self.list, nil)] {
            #expect(Pharmacies.render(.dismissing(state, nil)) == Pharmacies.render(state))
        }
    }

    @Test("the text screen is a box of equal-width lines that names every pharmacy")
    func textScreen() {
        let text = Pharmacies.render(.adding(Self.list, F.superdrug)).text
        let lines = text.split(separator: "\n")
        #expect(Set(lines.map(\.count)).count == 1, "\(text)")
        for pharmacy in Self.list + [F.superdrug] {
            #expect(text.contains(pharmacy.name))
        }
        #expect(text.contains("(saving…)"))
        let failed = Pharmacies.render(.loadingFailed(PharmaciesError(message: String(repeating: "long words ", count: 8)))).text
        #expect(Set(failed.split(separator: "\n").map(\.count)).count == 1, "long messages wrap inside the box:\n\(failed)")
    }

    @Test("states, events and routes survive a JSON round trip")
    func codable() throws {
        let state = Pharmacies.State.dismissing(.loaded(Self.list, F.offline), F.boots)
        let decoded = try JSONDecoder().decode(Pharmacies.State.self, from: JSONEncoder().encode(state))
        #expect(decoded == state)
        let event = Pharmacies.Event.didSelectPlace(.selected(F.superdrugPlace))
        #expect(try JSONDecoder().decode(Pharmacies.Event.self, from: JSONEncoder().encode(event)) == event)
        let route = Pharmacies.Route.dismiss(selected: F.boots)
        #expect(try JSONDecoder().decode(Pharmacies.Route.self, from: JSONEncoder().encode(route)) == route)
    }
}
