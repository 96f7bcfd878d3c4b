import Synchronization

/// An in-memory ``PharmaciesService`` with simulated latency and injected failures, for tests,
/// the command-line runner and demos.
///
/// ```swift
/// let service = FakePharmaciesService(saved: FakePharmaciesService.sampleSaved, latency: .seconds(1), clock: testClock)
/// service.server.failNext(.add)
/// ```
public final class FakePharmaciesService: PharmaciesService {
    /// The calls this service answers, for injecting failures and reading the call record.
    public enum Operation: String, Hashable, Sendable, CaseIterable {
        case fetch
        case add
        case delete
    }

    /// Latency, injected failures and the record of calls.
    public let server: FakeServer<Operation>
    private let saved: Mutex<[Pharmacy]>

    /// A service holding `saved`, answering after `latency` on `clock`, failing the first
    /// `failing[operation]` calls of each operation.
    public init(
        saved: [Pharmacy] = [],
        latency: Duration = .zero,
        clock: any Clock<Duration> = ContinuousClock(),
        failing: [Operation: Int] = [:]
    ) {
        self.saved = Mutex(saved)
        self.server = FakeServer(latency: latency, clock: clock, failing: failing)
    }

    /// What the service has stored now.
    public var savedPharmacies: [Pharmacy] {
        saved.withLock { $0 }
    }

    public func fetchPharmacies() async throws -> [Pharmacy] {
        try await server.perform(.fetch) { saved.withLock { $0 } }
    }

    public func add(_ pharmacy: Pharmacy) async throws -> Pharmacy {
        try await server.perform(.add) {
            saved.withLock { saved in
                if !saved.contains(where: { $0.reference == pharmacy.reference }) {
                    saved.append(pharmacy)
                }
            }
            return pharmacy
        }
    }

    public func delete(_ pharmacy: Pharmacy) async throws {
        try await server.perform(.delete) {
            saved.withLock { saved in saved.removeAll { $0.reference == pharmacy.reference } }
        }
    }
}

extension FakePharmaciesService {
    /// Two pharmacies a returning user has saved; the second has no known location.
    public static let sampleSaved: [Pharmacy] = [
        Pharmacy(
            reference: "boots-piccadilly", name: "Boots Piccadilly", address: "44-46 Regent St",
            location: Coordinate(latitude: 51.5099, longitude: -0.1357)),
        Pharmacy(reference: "day-lewis-camden", name: "Day Lewis", address: "12 Camden High St"),
    ]

    /// The places the fake map offers to pick from: one already in ``sampleSaved`` and two new.
    public static let sampleMapPlaces: [Place] = [
        Place(
            reference: "boots-piccadilly", name: "Boots Piccadilly", address: "44-46 Regent St",
            location: Coordinate(latitude: 51.5099, longitude: -0.1357)),
        Place(
            reference: "superdrug-strand", name: "Superdrug", address: "64 Strand",
            location: Coordinate(latitude: 51.5094, longitude: -0.1241)),
        Place(
            reference: "well-islington", name: "Well Pharmacy", address: "3 Upper St",
            location: Coordinate(latitude: 51.5362, longitude: -0.1033)),
    ]
}
