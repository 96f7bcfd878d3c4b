import FeedbackLoopDurable
import Testing

private enum Hidden {
    struct State {}
    enum Event {}
}

/// The default feature name is recorded in journals and compared at every open: it must be the
/// same in every run of every build while the types keep their names.
@Suite("The default feature name")
struct FeatureNameTests {
    @Test func namesBothTypesWithTheirModule() {
        struct Local {}
        #expect(
            DurableConfiguration.defaultFeature(state: Hidden.State.self, event: Hidden.Event.self)
                == "FeedbackLoopDurableTests.Hidden.State, FeedbackLoopDurableTests.Hidden.Event")
        // A private or local type's context is printed with an address, which moves from run to
        // run: it is left out.
        #expect(
            DurableConfiguration.defaultFeature(state: [Local].self, event: Int.self)
                == "Swift.Array<FeedbackLoopDurableTests.FeatureNameTests.Local>, Swift.Int")
    }

}
