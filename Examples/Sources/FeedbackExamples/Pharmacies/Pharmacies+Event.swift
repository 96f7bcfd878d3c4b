extension Pharmacies {
    /// Everything that can happen to the screen: the user's ``Action``s, answers from the
    /// service and the map.
    public enum Event: Hashable, Sendable, Codable, CustomStringConvertible {
        /// The user did something on this screen.
        case ui(Action)
        /// The saved pharmacies arrived (also sent to return to `loaded` after an alert or
        /// directions).
        case didLoad([Pharmacy])
        /// A service call failed.
        case didFail(PharmaciesError)
        /// The map screen closed, with or without a place.
        case didSelectPlace(MapResponse)
        /// The service saved the pharmacy.
        case didAdd(Pharmacy)
        /// The service deleted the pharmacy being deleted.
        case didDelete

        public var description: String {
            switch self {
            case .ui(let action): "user: \(action)"
            case .didLoad(let pharmacies): "didLoad \(pharmacies.count) pharmacies"
            case .didFail(let error): "didFail: \(error)"
            case .didSelectPlace(.selected(let place)): "map: picked \(place.name)"
            case .didSelectPlace(.cancelled): "map: closed without a pick"
            case .didAdd(let pharmacy): "didAdd \(pharmacy.name)"
            case .didDelete: "didDelete"
            }
        }
    }

    /// What the user can do on the pharmacies screen.
    public enum Action: Hashable, Sendable, Codable, CustomStringConvertible {
        /// Open the map to add a pharmacy.
        case addPharmacy
        /// Delete the pharmacy at the index of the list.
        case deletePharmacy(Int)
        /// Pick the pharmacy at the index, to return it or to see directions to it.
        case select(Int, Selection)
        /// Load again after loading failed.
        case retry
        /// Leave the screen without choosing anything.
        case cancel

        /// What selecting a pharmacy does, depending on the flow that opened the screen.
        public enum Selection: String, Hashable, Sendable, Codable {
            /// Close the screen, handing the pharmacy back.
            case dismiss
            /// Show directions to it.
            case showDirections
        }

        public var description: String {
            switch self {
            case .addPharmacy: "add pharmacy"
            case .deletePharmacy(let index): "delete #\(index + 1)"
            case .select(let index, .dismiss): "select #\(index + 1) for delivery"
            case .select(let index, .showDirections): "show directions to #\(index + 1)"
            case .retry: "retry"
            case .cancel: "cancel"
            }
        }
    }
}
