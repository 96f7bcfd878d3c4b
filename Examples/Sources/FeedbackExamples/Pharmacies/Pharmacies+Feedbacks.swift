import FeedbackLoop

extension Pharmacies {
    /// The article's feedbacks: load while loading, save while adding, delete while deleting,
    /// and return to `loaded` at once from the two transient states (an error to alert about,
    /// directions being shown), whose only job is to send a route.
    ///
    /// Each service call runs only while its state lasts: cancelling from `loading` cancels the
    /// fetch, and a late answer can never land in a newer state.
    public static func feedbacks(_ environment: Environment) -> [Feedback<State, Event>] {
        let service = environment.service
        return [
            // Retry goes loadingFailed → loading, so the predicate turns true again and reloads.
            .whenBecomesTrue({ $0 == .loading }) { _ in
                .run { send in
                    do {
                        send(.didLoad(try await service.fetchPharmacies()))
                    } catch {
                        send(.didFail(PharmaciesError(error)))
                    }
                }
            },
            .skippingRepeated(pharmacyBeingAdded) { pharmacy in
                .run { send in
                    do {
                        send(.didAdd(try await service.add(pharmacy)))
                    } catch {
                        send(.didFail(PharmaciesError(error)))
                    }
                }
            },
            .skippingRepeated(pharmacyBeingDeleted) { pharmacy in
                .run { send in
                    do {
                        try await service.delete(pharmacy)
                        send(.didDelete)
                    } catch {
                        send(.didFail(PharmaciesError(error)))
                    }
                }
            },
            .skippingRepeated(listAfterFailure) { pharmacies in .send(.didLoad(pharmacies)) },
            .skippingRepeated(listWhileShowingDirections) { pharmacies in .send(.didLoad(pharmacies)) },
        ]
    }

    private static func pharmacyBeingAdded(_ state: State) -> Pharmacy? {
        if case .adding(_, let pharmacy) = state { pharmacy } else { nil }
    }

    private static func pharmacyBeingDeleted(_ state: State) -> Pharmacy? {
        if case .deleting(let pharmacies, let index) = state { pharmacies[index] } else { nil }
    }

    private static func listAfterFailure(_ state: State) -> [Pharmacy]? {
        if case .loaded(let pharmacies, _?) = state { pharmacies } else { nil }
    }

    private static func listWhileShowingDirections(_ state: State) -> [Pharmacy]? {
        if case .showingDirections(let pharmacies, _) = state { pharmacies } else { nil }
    }
}
