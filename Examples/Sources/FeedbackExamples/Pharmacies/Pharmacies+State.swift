extension Pharmacies {
    /// The states of the article's diagram.
    ///
    /// Every state after loading carries the list, so each transition can hand it on. The
    /// diagram's `failed` state is `loaded` with an error: it lasts one step, long enough to send
    /// the alert route, before ``Pharmacies/feedbacks(_:)`` returns to plain `loaded`.
    public indirect enum State: Hashable, Sendable, Codable, CustomStringConvertible {
        /// Fetching the saved pharmacies.
        case loading
        /// Fetching failed; the user can retry or cancel.
        case loadingFailed(PharmaciesError)
        /// The list, and the error of an add or delete that just failed, if any.
        case loaded([Pharmacy], PharmaciesError?)
        /// The map is up for the user to pick a pharmacy to add.
        case searching([Pharmacy])
        /// Directions to a place are being shown.
        case showingDirections([Pharmacy], Place)
        /// Saving a pharmacy picked on the map.
        case adding([Pharmacy], Pharmacy)
        /// Deleting the pharmacy at the index.
        case deleting([Pharmacy], Int)
        /// The screen is closing from the given state, handing back the selected pharmacy or
        /// `nil` if the user cancelled. Final: no event changes it.
        case dismissing(State, Pharmacy?)

        /// The saved pharmacies as this state knows them (empty while loading).
        public var pharmacies: [Pharmacy] {
            switch self {
            case .loading, .loadingFailed: []
            case .loaded(let pharmacies, _), .searching(let pharmacies), .showingDirections(let pharmacies, _),
                .adding(let pharmacies, _), .deleting(let pharmacies, _):
                pharmacies
            case .dismissing(let state, _): state.pharmacies
            }
        }

        /// Whether the screen has been dismissed.
        public var isDismissing: Bool {
            if case .dismissing = self { true } else { false }
        }

        public var description: String {
            switch self {
            case .loading:
                "loading"
            case .loadingFailed(let error):
                "loading failed: \(error)"
            case .loaded(let pharmacies, nil):
                "loaded \(Self.describe(pharmacies))"
            case .loaded(let pharmacies, let error?):
                "loaded \(Self.describe(pharmacies)) with error: \(error)"
            case .searching(let pharmacies):
                "searching the map, list \(Self.describe(pharmacies))"
            case .showingDirections(let pharmacies, let place):
                "showing directions to \(place.name), list \(Self.describe(pharmacies))"
            case .adding(let pharmacies, let pharmacy):
                "adding \(pharmacy.name) to \(Self.describe(pharmacies))"
            case .deleting(let pharmacies, let index):
                "deleting #\(index + 1) \(pharmacies[index].name) from \(Self.describe(pharmacies))"
            case .dismissing(let state, let selected):
                "dismissing with \(selected.map(\.name) ?? "no pharmacy") (from: \(state))"
            }
        }

        private static func describe(_ pharmacies: [Pharmacy]) -> String {
            "[" + pharmacies.map(\.name).joined(separator: ", ") + "]"
        }
    }
}
