// Every file of this target is inside `#if Services`: without it, swift-service-lifecycle and
// swift-metrics are left out of an adopter's graph, and a build that uses the product gets this
// one message.
#if !Services
#error(
    "FeedbackLoopServices needs the package trait Services: add traits: [\"Services\"] to the .package line of FeedbackLoop; in this repository, build and test with --enable-all-traits"
)
#endif
