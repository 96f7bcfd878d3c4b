/// The back end the pharmacies screen talks to — the article's `PharmaciesBusinessController`.
///
/// Calls are cancelled through ordinary task cancellation when the screen no longer needs their
/// answer (the user cancelled loading, the screen was dismissed); an implementation should stop
/// its work and throw `CancellationError`.
public protocol PharmaciesService: Sendable {
    /// The pharmacies the user saved before.
    func fetchPharmacies() async throws -> [Pharmacy]
    /// Saves `pharmacy` and returns it as stored.
    func add(_ pharmacy: Pharmacy) async throws -> Pharmacy
    /// Removes `pharmacy` from the saved ones.
    func delete(_ pharmacy: Pharmacy) async throws
}
