// swift-tools-version: 6.1
import PackageDescription

// The PostgreSQL store of durable loops, in a package of its own: postgres-nio brings swift-nio,
// swift-crypto and swift-nio-ssl, a 2.5–4.5 minute first build on 2 cores that the root package's
// `swift test` and its ThreadSanitizer run would otherwise both pay. Its tests need a running
// server: `scripts/postgres.sh` (run by test.sh) starts one. `feedback-bench-postgres` is
// `feedback-bench --scenario durable` on PostgreSQL, here for the same reason.
let package = Package(
    name: "FeedbackLoopPostgres",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "FeedbackLoopPostgres", targets: ["FeedbackLoopPostgres"]),
        .executable(name: "feedback-bench-postgres", targets: ["feedback-bench-postgres"]),
    ],
    dependencies: [
        .package(name: "FeedbackLoop", path: "../../"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .target(
            name: "FeedbackLoopPostgres",
            dependencies: [
                .product(name: "FeedbackLoopDurable", package: "FeedbackLoop"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "feedback-bench-postgres",
            dependencies: [
                "FeedbackLoopPostgres",
                .product(name: "FeedbackBenchmarkScenarios", package: "FeedbackLoop"),
                .product(name: "FeedbackLoop", package: "FeedbackLoop"),
                .product(name: "FeedbackLoopDurable", package: "FeedbackLoop"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "FeedbackLoopPostgresTests",
            dependencies: [
                "FeedbackLoopPostgres",
                "feedback-bench-postgres",
                .product(name: "FeedbackBenchmarkScenarios", package: "FeedbackLoop"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "FeedbackLoop", package: "FeedbackLoop"),
                .product(name: "FeedbackLoopDurable", package: "FeedbackLoop"),
                .product(name: "FeedbackLoopDurableTesting", package: "FeedbackLoop"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
