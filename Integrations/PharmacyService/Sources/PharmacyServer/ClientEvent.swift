import FeedbackExamples

/// What a client may ask of its pharmacies screen: the user's actions and the map's answer — never
/// the service's answers, which only the session's own effects send.
///
/// JSON, discriminated by `type`:
///
/// ```json
/// {"type": "addPharmacy"}
/// {"type": "pickPlace", "reference": "superdrug-strand"}
/// {"type": "closeMap"}
/// {"type": "deletePharmacy", "index": 0}
/// {"type": "select", "index": 0, "selection": "dismiss"}      // or "showDirections"
/// {"type": "retry"}
/// {"type": "cancel"}
/// ```
public enum ClientEvent: Hashable, Sendable, Codable {
    case addPharmacy
    /// Picks the map place with this reference (see ``PharmacyServer/Configuration/mapPlaces``).
    case pickPlace(reference: String)
    /// Closes the map without picking.
    case closeMap
    case deletePharmacy(index: Int)
    case select(index: Int, selection: Pharmacies.Action.Selection)
    case retry
    case cancel

    private enum Kind: String, Codable, CaseIterable {
        case addPharmacy, pickPlace, closeMap, deletePharmacy, select, retry, cancel
    }

    private enum CodingKeys: String, CodingKey {
        case type, reference, index, selection
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let name = try container.decode(String.self, forKey: .type)
        guard let kind = Kind(rawValue: name) else {
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container,
                debugDescription: "unknown type '\(name)'; expected one of "
                    + Kind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        switch kind {
        case .addPharmacy: self = .addPharmacy
        case .pickPlace: self = .pickPlace(reference: try container.decode(String.self, forKey: .reference))
        case .closeMap: self = .closeMap
        case .deletePharmacy: self = .deletePharmacy(index: try container.decode(Int.self, forKey: .index))
        case .select:
            self = .select(
                index: try container.decode(Int.self, forKey: .index),
                selection: try container.decode(Pharmacies.Action.Selection.self, forKey: .selection))
        case .retry: self = .retry
        case .cancel: self = .cancel
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .addPharmacy:
            try container.encode(Kind.addPharmacy, forKey: .type)
        case .pickPlace(let reference):
            try container.encode(Kind.pickPlace, forKey: .type)
            try container.encode(reference, forKey: .reference)
        case .closeMap:
            try container.encode(Kind.closeMap, forKey: .type)
        case .deletePharmacy(let index):
            try container.encode(Kind.deletePharmacy, forKey: .type)
            try container.encode(index, forKey: .index)
        case .select(let index, let selection):
            try container.encode(Kind.select, forKey: .type)
            try container.encode(index, forKey: .index)
            try container.encode(selection, forKey: .selection)
        case .retry:
            try container.encode(Kind.retry, forKey: .type)
        case .cancel:
            try container.encode(Kind.cancel, forKey: .type)
        }
    }

    /// The screen's event for this request, or `nil` when it names a map place that does not
    /// exist.
    func event(mapPlaces: [Place]) -> Pharmacies.Event? {
        switch self {
        case .addPharmacy: .ui(.addPharmacy)
        case .pickPlace(let reference): mapPlaces.first { $0.reference == reference }.map { .didSelectPlace(.selected($0)) }
        case .closeMap: .didSelectPlace(.cancelled)
        case .deletePharmacy(let index): .ui(.deletePharmacy(index))
        case .select(let index, let selection): .ui(.select(index, selection))
        case .retry: .ui(.retry)
        case .cancel: .ui(.cancel)
        }
    }
}
