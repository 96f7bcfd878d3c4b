// Every file of this target is inside `#if Tracing`: without it, swift-distributed-tracing's
// `Tracing` product is left out of an adopter's graph, and a build that uses the product gets
// this one message.
#if !Tracing
#error(
    "FeedbackLoopTracing needs the package trait Tracing: add traits: [\"Tracing\"] to the .package line of FeedbackLoop; in this repository, build and test with --enable-all-traits"
)
#endif
