import FeedbackExamples
import Testing

/// One edge of the article's state diagram, or an event a state must ignore.
struct PharmaciesTransition: Sendable, CustomTestStringConvertible {
    var name: String
    var state: Pharmacies.State
    var event: Pharmacies.Event
    var expected: Pharmacies.State

    var testDescription: String { name }
}

private typealias F = Fixtures

@Suite("Pharmacies: every transition of the article's diagram")
struct PharmaciesReducerTests {
    static let list = F.saved

    static let transitions: [PharmaciesTransition] = [
        // loading
        .init(name: "loading → loaded", state: .loading, event: .didLoad(list), expected: .loaded(list, nil)),
        .init(name: "loading → loading failed", state: .loading, event: .didFail(F.offline), expected: .loadingFailed(F.offline)),
        .init(name: "loading → dismissing on cancel", state: .loading, event: .ui(.cancel), expected: .dismissing(.loading, nil)),
        .init(name: "loading ignores add", state: .loading, event: .ui(.addPharmacy), expected: .loading),
        // loading failed
        .init(name: "loading failed → loading on retry", state: .loadingFailed(F.offline), event: .ui(.retry), expected: .loading),
        .init(
            name: "loading failed → dismissing on cancel", state: .loadingFailed(F.offline), event: .ui(.cancel),
            expected: .dismissing(.loadingFailed(F.offline), nil)),
        .init(
            name: "loading failed ignores a late load", state: .loadingFailed(F.offline), event: .didLoad(list),
            expected: .loadingFailed(F.offline)),
        // loaded
        .init(name: "loaded → searching on add", state: .loaded(list, nil), event: .ui(.addPharmacy), expected: .searching(list)),
        .init(name: "loaded → deleting", state: .loaded(list, nil), event: .ui(.deletePharmacy(1)), expected: .deleting(list, 1)),
        .init(
            name: "loaded ignores deleting a row that does not exist", state: .loaded(list, nil),
            event: .ui(.deletePharmacy(2)), expected: .loaded(list, nil)),
        .init(
            name: "loaded → dismissing with the selected pharmacy", state: .loaded(list, nil),
            event: .ui(.select(0, .dismiss)), expected: .dismissing(.loaded(list, nil), F.boots)),
        .init(
            name: "loaded → showing directions", state: .loaded(list, nil), event: .ui(.select(0, .showDirections)),
            expected: .showingDirections(list, F.boots.place!)),
        .init(
            name: "loaded stays loaded for directions to a pharmacy without location", state: .loaded(list, F.offline),
            event: .ui(.select(1, .showDirections)), expected: .loaded(list, nil)),
        .init(
            name: "loaded ignores selecting a row that does not exist", state: .loaded(list, nil),
            event: .ui(.select(-1, .dismiss)), expected: .loaded(list, nil)),
        .init(
            name: "loaded → dismissing without a pharmacy on cancel", state: .loaded(list, nil), event: .ui(.cancel),
            expected: .dismissing(.loaded(list, nil), nil)),
        .init(name: "loaded with error → loaded", state: .loaded(list, F.offline), event: .didLoad(list), expected: .loaded(list, nil)),
        .init(name: "loaded ignores retry", state: .loaded(list, nil), event: .ui(.retry), expected: .loaded(list, nil)),
        // searching
        .init(
            name: "searching → adding a new pharmacy", state: .searching(list), event: .didSelectPlace(.selected(F.superdrugPlace)),
            expected: .adding(list, F.superdrug)),
        .init(
            name: "searching → loaded when the pick is already listed", state: .searching(list),
            event: .didSelectPlace(.selected(F.bootsPlace)), expected: .loaded(list, nil)),
        .init(
            name: "searching → loaded when the map closes without a pick", state: .searching(list),
            event: .didSelectPlace(.cancelled), expected: .loaded(list, nil)),
        .init(name: "searching ignores cancel", state: .searching(list), event: .ui(.cancel), expected: .searching(list)),
        // adding
        .init(
            name: "adding → loaded with the pharmacy", state: .adding(list, F.superdrug), event: .didAdd(F.superdrug),
            expected: .loaded(list + [F.superdrug], nil)),
        .init(
            name: "adding → failed (loaded with error)", state: .adding(list, F.superdrug), event: .didFail(F.offline),
            expected: .loaded(list, F.offline)),
        .init(
            name: "adding ignores add", state: .adding(list, F.superdrug), event: .ui(.addPharmacy),
            expected: .adding(list, F.superdrug)),
        // deleting
        .init(name: "deleting → loaded without the pharmacy", state: .deleting(list, 0), event: .didDelete, expected: .loaded([F.dayLewis], nil)),
        .init(
            name: "deleting → failed (loaded with error), keeping the pharmacy", state: .deleting(list, 0),
            event: .didFail(F.offline), expected: .loaded(list, F.offline)),
        .init(name: "deleting ignores cancel", state: .deleting(list, 0), event: .ui(.cancel), expected: .deleting(list, 0)),
        // showing directions
        .init(
            name: "showing directions → loaded", state: .showingDirections(list, F.boots.place!), event: .didLoad(list),
            expected: .loaded(list, nil)),
        .init(
            name: "showing directions ignores cancel", state: .showingDirections(list, F.boots.place!), event: .ui(.cancel),
            expected: .showingDirections(list, F.boots.place!)),
        // dismissing is final
        .init(
            name: "dismissing ignores loads", state: .dismissing(.loading, nil), event: .didLoad(list),
            expected: .dismissing(.loading, nil)),
        .init(
            name: "dismissing ignores user actions", state: .dismissing(.loaded(list, nil), F.boots),
            event: .ui(.addPharmacy), expected: .dismissing(.loaded(list, nil), F.boots)),
    ]

    @Test(arguments: transitions)
    func transition(_ transition: PharmaciesTransition) {
        var state = transition.state
        Pharmacies.reduce(&state, transition.event)
        #expect(state == transition.expected)
    }

    @Test("the initial state is loading")
    func initialState() {
        #expect(Pharmacies.initialState == .loading)
    }
}
