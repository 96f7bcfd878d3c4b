// Every file of this target is inside `#if Durable`: without it, GRDB.swift is left out of an
// adopter's graph, and a build that uses the product gets this one message.
#if !Durable
#error(
    "FeedbackLoopDurable needs the package trait Durable: add traits: [\"Durable\"] to the .package line of FeedbackLoop; in this repository, build and test with --enable-all-traits"
)
#endif
