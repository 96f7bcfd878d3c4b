// Every file of this target is inside `#if Postgres`: without it, postgres-nio and
// swift-service-lifecycle are left out of an adopter's graph, and a build that uses the product
// gets this one message.
//
// The ThreadSanitizer build of this repository (-DTSAN) builds without the trait: the PostgreSQL
// suite needs a server, which that run does not start, and swift-nio and BoringSSL would be
// compiled under TSan for nothing. There the target is empty.
#if !Postgres && !TSAN
#error(
    "FeedbackLoopPostgres needs the package trait Postgres: add traits: [\"Postgres\"] to the .package line of FeedbackLoop; in this repository, build and test with --enable-all-traits"
)
#endif
