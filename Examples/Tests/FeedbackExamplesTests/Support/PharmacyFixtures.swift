import FeedbackExamples

/// The pharmacies and places the pharmacies tests use.
enum Fixtures {
    /// Saved, with a location.
    static let boots = FakePharmaciesService.sampleSaved[0]
    /// Saved, without a location: no directions.
    static let dayLewis = FakePharmaciesService.sampleSaved[1]
    static let saved = [boots, dayLewis]
    /// On the map and not saved.
    static let superdrugPlace = FakePharmaciesService.sampleMapPlaces[1]
    static let superdrug = Pharmacy(superdrugPlace)
    /// On the map and already saved.
    static let bootsPlace = FakePharmaciesService.sampleMapPlaces[0]
    static let offline = PharmaciesError(message: "offline")
}
