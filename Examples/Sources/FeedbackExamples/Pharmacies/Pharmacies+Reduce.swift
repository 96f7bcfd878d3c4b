extension Pharmacies {
    /// The transitions of the article's diagram. Events a state does not expect leave it
    /// unchanged, and so do actions naming a row that does not exist.
    public static func reduce(_ state: inout State, _ event: Event) {
        state = next(after: state, on: event)
    }

    /// The reducer in the article's value style: one function per state of the diagram.
    public static func next(after state: State, on event: Event) -> State {
        switch state {
        case .loading:
            reduceLoading(state, event)
        case .loadingFailed:
            reduceLoadingFailed(state, event)
        case .loaded(let pharmacies, _):
            reduceLoaded(state, event, pharmacies)
        case .searching(let pharmacies):
            reduceSearching(state, event, pharmacies)
        case .showingDirections:
            reduceShowingDirections(state, event)
        case .adding(let pharmacies, _):
            reduceAdding(state, event, pharmacies)
        case .deleting(let pharmacies, let index):
            reduceDeleting(state, event, pharmacies, index)
        case .dismissing:
            state
        }
    }

    private static func reduceLoading(_ state: State, _ event: Event) -> State {
        switch event {
        case .didLoad(let pharmacies): .loaded(pharmacies, nil)
        case .didFail(let error): .loadingFailed(error)
        case .ui(.cancel): .dismissing(state, nil)
        default: state
        }
    }

    private static func reduceLoadingFailed(_ state: State, _ event: Event) -> State {
        switch event {
        case .ui(.retry): .loading
        case .ui(.cancel): .dismissing(state, nil)
        default: state
        }
    }

    private static func reduceLoaded(_ state: State, _ event: Event, _ pharmacies: [Pharmacy]) -> State {
        switch event {
        case .didLoad(let pharmacies):
            return .loaded(pharmacies, nil)
        case .ui(.addPharmacy):
            return .searching(pharmacies)
        case .ui(.deletePharmacy(let index)) where pharmacies.indices.contains(index):
            return .deleting(pharmacies, index)
        case .ui(.select(let index, .dismiss)) where pharmacies.indices.contains(index):
            return .dismissing(state, pharmacies[index])
        case .ui(.select(let index, .showDirections)) where pharmacies.indices.contains(index):
            // Without a location there are no directions to show; the article stays on the list.
            guard let place = pharmacies[index].place else { return .loaded(pharmacies, nil) }
            return .showingDirections(pharmacies, place)
        case .ui(.cancel):
            return .dismissing(state, nil)
        default:
            return state
        }
    }

    private static func reduceSearching(_ state: State, _ event: Event, _ pharmacies: [Pharmacy]) -> State {
        switch event {
        case .didSelectPlace(.selected(let place))
        where !pharmacies.contains(where: { $0.reference == place.reference }):
            .adding(pharmacies, Pharmacy(place))
        case .didSelectPlace:
            // Closed without a pick, or picked a pharmacy already on the list: nothing to add.
            .loaded(pharmacies, nil)
        default:
            state
        }
    }

    private static func reduceShowingDirections(_ state: State, _ event: Event) -> State {
        switch event {
        case .didLoad(let pharmacies): .loaded(pharmacies, nil)
        default: state
        }
    }

    private static func reduceAdding(_ state: State, _ event: Event, _ pharmacies: [Pharmacy]) -> State {
        switch event {
        case .didAdd(let pharmacy): .loaded(pharmacies + [pharmacy], nil)
        case .didFail(let error): .loaded(pharmacies, error)
        default: state
        }
    }

    private static func reduceDeleting(
        _ state: State, _ event: Event, _ pharmacies: [Pharmacy], _ index: Int
    ) -> State {
        switch event {
        case .didDelete:
            var remaining = pharmacies
            remaining.remove(at: index)
            return .loaded(remaining, nil)
        case .didFail(let error):
            return .loaded(pharmacies, error)
        default:
            return state
        }
    }
}
