import FeedbackExamples

/// A back end whose every call hangs until cancelled (it honours cancellation, as a real client
/// with a request timeout would), and that tells the test when a load began.
struct StalledPharmaciesService: PharmaciesService {
    let loadStarted: Gate

    func fetchPharmacies() async throws -> [Pharmacy] {
        loadStarted.open()
        try await Task.sleep(for: .seconds(3600))
        return []
    }

    func add(_ pharmacy: Pharmacy) async throws -> Pharmacy {
        try await Task.sleep(for: .seconds(3600))
        return pharmacy
    }

    func delete(_ pharmacy: Pharmacy) async throws {
        try await Task.sleep(for: .seconds(3600))
    }
}
