// `import FeedbackLoopPostgres` in a package written for the old layout finds the root package's
// module; this target only makes the old `.product` line keep building for one release.
#warning(
    "FeedbackLoopPostgres moved into the FeedbackLoop package: depend on FeedbackLoop with traits: [\"Postgres\"] and write .product(name: \"FeedbackLoopPostgres\", package: \"FeedbackLoop\"); Integrations/FeedbackLoopPostgres goes away in the next release"
)
@_exported import FeedbackLoopPostgres
