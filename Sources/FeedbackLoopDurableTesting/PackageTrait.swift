// Every file of this target is inside `#if Durable && Testing`: without it, GRDB.swift and the
// test kit's packages are left out of an adopter's graph, and a build that uses the product gets
// this one message.
#if !(Durable && Testing)
#error(
    "FeedbackLoopDurableTesting needs the package traits Durable and Testing: add traits: [\"Durable\", \"Testing\"] to the .package line of FeedbackLoop; in this repository, build and test with --enable-all-traits"
)
#endif
