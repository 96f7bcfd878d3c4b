// Every file of this target is inside `#if Testing`: without it, swift-clocks, swift-custom-dump
// and xctest-dynamic-overlay are left out of an adopter's graph, and a build that uses the product
// gets this one message.
#if !Testing
#error(
    "FeedbackLoopTesting needs the package trait Testing: add traits: [\"Testing\"] to the .package line of FeedbackLoop; in this repository, build and test with --enable-all-traits"
)
#endif
