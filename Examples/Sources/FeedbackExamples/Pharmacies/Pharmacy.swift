/// A pharmacy the user saved for deliveries — the article's `PharmacyDTO`.
public struct Pharmacy: Hashable, Sendable, Codable, Identifiable, CustomStringConvertible {
    /// The map's identifier for the place; two entries with the same reference are the same
    /// pharmacy.
    public var reference: String
    public var name: String
    public var address: String
    /// Where it is, when known. Without it there are no directions to show.
    public var location: Coordinate?

    public init(reference: String, name: String, address: String, location: Coordinate? = nil) {
        self.reference = reference
        self.name = name
        self.address = address
        self.location = location
    }

    /// A pharmacy made from a place picked on the map.
    public init(_ place: Place) {
        self.init(reference: place.reference, name: place.name, address: place.address, location: place.location)
    }

    public var id: String { reference }

    /// The place to show directions to, or `nil` when the location is unknown (the article's
    /// `toPlace()`).
    public var place: Place? {
        location.map { Place(reference: reference, name: name, address: address, location: $0) }
    }

    public var description: String { "\(name), \(address)" }
}

/// A place on the map.
public struct Place: Hashable, Sendable, Codable, CustomStringConvertible {
    public var reference: String
    public var name: String
    public var address: String
    public var location: Coordinate

    public init(reference: String, name: String, address: String, location: Coordinate) {
        self.reference = reference
        self.name = name
        self.address = address
        self.location = location
    }

    public var description: String { "\(name), \(address) at \(location)" }
}

/// A latitude and longitude in degrees.
public struct Coordinate: Hashable, Sendable, Codable, CustomStringConvertible {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    public var description: String { "(\(latitude), \(longitude))" }
}

/// What the map screen answers when it closes.
public enum MapResponse: Hashable, Sendable, Codable {
    /// The user picked a place.
    case selected(Place)
    /// The user closed the map without picking anything.
    case cancelled
}

/// A failure shown to the user — the article's `CoreError`.
public typealias PharmaciesError = FeatureError
