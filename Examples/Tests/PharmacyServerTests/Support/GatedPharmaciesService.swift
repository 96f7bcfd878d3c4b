import FeedbackExamples

/// The fake back end, except that saving a pharmacy waits until the test opens `saves`: the way
/// to have a save in flight in every session when shutdown begins.
struct GatedPharmaciesService: PharmaciesService {
    let base = FakePharmaciesService(saved: FakePharmaciesService.sampleSaved)
    let saves: Gate

    func fetchPharmacies() async throws -> [Pharmacy] {
        try await base.fetchPharmacies()
    }

    func add(_ pharmacy: Pharmacy) async throws -> Pharmacy {
        try await saves.wait()
        return try await base.add(pharmacy)
    }

    func delete(_ pharmacy: Pharmacy) async throws {
        try await base.delete(pharmacy)
    }
}
