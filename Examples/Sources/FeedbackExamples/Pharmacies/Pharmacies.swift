import FeedbackLoop

/// The pharmacies list of "Implementing features with ReactiveFeedback": the user's saved
/// pharmacies, adding one from a map, deleting one, showing directions to one, and leaving the
/// screen with or without a pharmacy selected for delivery.
///
/// The whole feature is the article's state diagram: ``State`` holds the diagram's states,
/// ``reduce(_:_:)`` its transitions, ``feedbacks(_:)`` its effects, ``route(for:)`` the
/// navigation signals it sends and ``render(_:)`` the screen each state shows.
///
/// ```swift
/// let loop = Pharmacies.makeLoop(environment: .init(service: FakePharmaciesService()), backend: .actor)
/// loop.send(.ui(.addPharmacy))        // → searching, route: show map
/// loop.send(.didSelectPlace(.selected(place)))   // → adding → loaded
/// ```
public enum Pharmacies: ExampleFeature {
    /// What the feedbacks need.
    public struct Environment: Sendable {
        public var service: any PharmaciesService

        public init(service: any PharmaciesService) {
            self.service = service
        }
    }

    /// The screen opens by loading the saved pharmacies.
    public static var initialState: State { .loading }
}
