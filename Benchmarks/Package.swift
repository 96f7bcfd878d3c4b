// swift-tools-version: 6.1
import PackageDescription

// Everything that measures FeedbackLoop, in a package of its own so that the benchmark harness,
// the peer's reactive framework (OpenCombine) and the command-line tools never enter an adopter's
// graph. From the repository's root:
//
//     swift run --package-path Benchmarks -c release feedback-bench      (the comparison, ~1.5 min)
//     .ci/postgres.sh swift run --package-path Benchmarks --traits Postgres -c release feedback-bench-postgres
//     (cd Benchmarks && swift package benchmark thresholds check)      (the allocation gate)
//
// It depends on the root once. Its own trait Postgres adds the PostgreSQL benchmark and asks the
// root for its trait Postgres too: without it, nothing here resolves or builds swift-nio (the
// benchmark comparison and the ThreadSanitizer run of the scenarios' tests do not need it). With
// it, the root is asked for every trait, the root's own `--enable-all-traits` set, so that CI
// builds the root, this package and Examples/ in one build folder without compiling FeedbackLoop's
// modules twice. Either way one package asks FeedbackLoop for one trait set: SwiftPM 6.1-6.3
// cannot resolve a graph that asks for two.
//
// Allocation counts come from package-benchmark's MallocInterposer trait: it works on Swift 6.3
// without any system package, so CI needs nothing installed for the allocation gate (jemalloc
// would need Debian's libjemalloc-dev and the deprecated jemalloc backend). Without `traits:` the
// resolution fails here: the default trait set pulls in a package this machine does not have.
let package = Package(
    name: "FeedbackLoopBenchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "feedback-bench", targets: ["feedback-bench"]),
        .executable(name: "feedback-bench-postgres", targets: ["feedback-bench-postgres"]),
    ],
    traits: [
        .trait(name: "Postgres", description: "feedback-bench-postgres: the durable scenario on PostgreSQL (postgres-nio, swift-nio)"),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(
            name: "FeedbackLoop", path: "../",
            traits: ["Testing", "Services", "Durable", "Tracing", .trait(name: "Postgres", condition: .when(traits: ["Postgres"]))]),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        // The durable limit's transaction written without the journal's asynchronous API (already in
        // the root's graph through its trait Durable).
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // The benchmark's peer only (the `system` operator on OpenCombine).
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // `InstrumentationSystem`, for feedback-bench's --propagate-context (already in the root's graph).
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // The scenarios, shared by feedback-bench, feedback-bench-postgres and the
        // package-benchmark suite. Support/CoreLock.swift is a link to the core's Lock.swift: the
        // limits are written with the engine's own lock, which is package-visible there and so is
        // compiled again here.
        .target(
            name: "FeedbackBenchmarkScenarios",
            dependencies: [
                .product(name: "FeedbackLoop", package: "FeedbackLoop"),
                .product(name: "FeedbackLoopDurable", package: "FeedbackLoop"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ]
        ),
        .executableTarget(
            name: "feedback-bench",
            dependencies: [
                "FeedbackBenchmarkScenarios",
                .product(name: "FeedbackLoop", package: "FeedbackLoop"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            ]
        ),
        // `feedback-bench --scenario durable` on PostgreSQL: an executable of its own, so that
        // feedback-bench never builds swift-nio. Built without the trait, it says how to build it.
        .executableTarget(
            name: "feedback-bench-postgres",
            dependencies: [
                "FeedbackBenchmarkScenarios",
                .product(name: "FeedbackLoop", package: "FeedbackLoop"),
                .product(name: "FeedbackLoopDurable", package: "FeedbackLoop"),
                .product(name: "FeedbackLoopPostgres", package: "FeedbackLoop", condition: .when(traits: ["Postgres"])),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The package-benchmark suite: `swift package benchmark` runs it; CI gates on the
        // allocation counts in Thresholds/ (update-thresholds.sh rewrites them).
        .executableTarget(
            name: "FeedbackBenchmarks",
            dependencies: [
                "FeedbackBenchmarkScenarios",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "FeedbackLoop", package: "FeedbackLoop"),
            ],
            path: "Benchmarks/FeedbackBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .testTarget(
            name: "FeedbackBenchmarkScenariosTests",
            dependencies: [
                "FeedbackBenchmarkScenarios", "feedback-bench",
                .product(name: "FeedbackLoop", package: "FeedbackLoop"),
                .product(name: "FeedbackLoopDurable", package: "FeedbackLoop"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ]
        ),
        // Empty without the trait Postgres. Its server half needs a server:
        // `.ci/postgres.sh swift test --package-path Benchmarks --traits Postgres --filter FeedbackBenchPostgresTests`.
        .testTarget(
            name: "FeedbackBenchPostgresTests",
            dependencies: [
                "FeedbackBenchmarkScenarios", "feedback-bench-postgres",
                .product(name: "FeedbackLoop", package: "FeedbackLoop"),
                .product(name: "FeedbackLoopPostgres", package: "FeedbackLoop", condition: .when(traits: ["Postgres"])),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
