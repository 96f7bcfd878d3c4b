// swift-tools-version: 6.1
import PackageDescription

// The core library depends on swift-log and swift-distributed-tracing's `Instrumentation` alone. Everything heavier lives in its own target (test
// kit, services, benchmarks, examples) or its own package (Benchmarks/, Integrations/), so that
// depending on FeedbackLoop stays cheap.
//
// ThreadSanitizer cannot see inside `Synchronization.Mutex` (it reports false races under
// contention), so the internal `Lock` switches to pthread_mutex when built with
// `-Xswiftc -DTSAN`. Nothing else changes between the two builds.
let package = Package(
    name: "FeedbackLoop",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "FeedbackLoop", targets: ["FeedbackLoop"]),
        .library(name: "FeedbackLoopTesting", targets: ["FeedbackLoopTesting"]),
        .library(name: "FeedbackLoopRecording", targets: ["FeedbackLoopRecording"]),
        .library(name: "FeedbackLoopServices", targets: ["FeedbackLoopServices"]),
        .library(name: "FeedbackLoopDurable", targets: ["FeedbackLoopDurable"]),
        .library(name: "FeedbackLoopDurableTesting", targets: ["FeedbackLoopDurableTesting"]),
        .library(name: "FeedbackExamples", targets: ["FeedbackExamples"]),
        .library(name: "FeedbackBenchmarkScenarios", targets: ["FeedbackBenchmarkScenarios"]),
        .executable(name: "feedback-bench", targets: ["feedback-bench"]),
        .executable(name: "feedback-examples", targets: ["feedback-examples"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // `ServiceContext` only (its `Instrumentation` product): the core carries a caller's context to effects.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/pointfreeco/swift-clocks", from: "1.1.1"),
        .package(url: "https://github.com/pointfreeco/swift-custom-dump", from: "1.7.3"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/pointfreeco/xctest-dynamic-overlay", from: "1.13.1"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // Durable loops' embedded store (FeedbackLoopDurable only); needs Debian's libsqlite3-dev.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // The benchmark's peer only (the `system` operator on OpenCombine); never the core library.
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
    ],
    targets: [
        // MARK: The library
        .target(
            name: "FeedbackLoop",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            ]
        ),
        .testTarget(
            name: "FeedbackLoopTests",
            dependencies: [
                "FeedbackLoop", .product(name: "Logging", package: "swift-log"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            ]
        ),

        // MARK: Test kit, recording and diagrams
        .target(
            name: "FeedbackLoopTesting",
            dependencies: [
                "FeedbackLoop",
                "FeedbackLoopRecording",
                .product(name: "Clocks", package: "swift-clocks"),
                .product(name: "CustomDump", package: "swift-custom-dump"),
                // Failures reach Swift Testing and XCTest alike. IssueReporting finds the test
                // frameworks at run time through IssueReportingTestSupport; on Linux a test
                // binary without it reports "an issue was recorded without linking the Testing
                // framework" instead of failing, so the kit brings it to its users' test targets.
                .product(name: "IssueReporting", package: "xctest-dynamic-overlay"),
                .product(name: "IssueReportingTestSupport", package: "xctest-dynamic-overlay"),
            ]
        ),
        .testTarget(
            name: "FeedbackLoopTestingTests",
            dependencies: [
                "FeedbackLoopTesting",
                "FeedbackLoopRecording",
                "FeedbackExamples",
                .product(name: "Clocks", package: "swift-clocks"),
            ]
        ),
        .target(
            name: "FeedbackLoopRecording",
            dependencies: ["FeedbackLoop"]
        ),
        .testTarget(
            name: "FeedbackLoopRecordingTests",
            dependencies: [
                "FeedbackLoopRecording",
                .product(name: "Clocks", package: "swift-clocks"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: Service integration
        .target(
            name: "FeedbackLoopServices",
            dependencies: [
                "FeedbackLoop",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // Re-exported in part (see Exports.swift): `MetricsFactory`, `UnixSignal`.
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "FeedbackLoopServicesTests",
            dependencies: [
                "FeedbackLoopServices",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]
        ),

        // MARK: Durable loops: the journal protocol, the durable loop and the SQLite store. The
        // PostgreSQL store is its own package (Durable/Postgres) so that swift-nio stays out of
        // this package's builds.
        .target(
            name: "FeedbackLoopDurable",
            dependencies: [
                "FeedbackLoop",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .target(
            name: "FeedbackLoopDurableTesting",
            dependencies: [
                "FeedbackLoopDurable", "FeedbackLoop",
                // Failures worded and reported as TestLoop's (its package-visible FailureReport).
                "FeedbackLoopTesting",
                // Diffs and failures as in FeedbackLoopTesting (see there for the support product).
                .product(name: "CustomDump", package: "swift-custom-dump"),
                .product(name: "IssueReporting", package: "xctest-dynamic-overlay"),
                .product(name: "IssueReportingTestSupport", package: "xctest-dynamic-overlay"),
            ]
        ),
        .testTarget(
            name: "FeedbackLoopDurableTests",
            dependencies: [
                "FeedbackLoopDurable", "FeedbackLoopDurableTesting", "FeedbackLoop",
                // Raw SQL, to damage journals as another tool would.
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            // Journals written by older versions of example features.
            resources: [.copy("Fixtures")]
        ),
        // The replay check of the example feature Tally: what users write for their own.
        .executableTarget(
            name: "feedback-journal",
            dependencies: ["FeedbackLoopDurableTesting"]
        ),

        // MARK: Examples from the articles
        .target(
            name: "FeedbackExamples",
            dependencies: ["FeedbackLoop", .product(name: "Clocks", package: "swift-clocks")],
            exclude: ["README.md"]
        ),
        .executableTarget(
            name: "feedback-examples",
            dependencies: [
                "FeedbackExamples",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "FeedbackExamplesTests",
            dependencies: ["FeedbackExamples", "FeedbackLoopTesting", "FeedbackLoopRecording", .product(name: "Clocks", package: "swift-clocks")]
        ),

        // MARK: Benchmarks (the package-benchmark suite is a separate package in Benchmarks/)
        .target(
            name: "FeedbackBenchmarkScenarios",
            dependencies: [
                "FeedbackLoop",
                "FeedbackLoopDurable",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ]
        ),
        .executableTarget(
            name: "feedback-bench",
            dependencies: [
                "FeedbackBenchmarkScenarios",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "FeedbackBenchmarkScenariosTests",
            dependencies: [
                "FeedbackBenchmarkScenarios", "feedback-bench", .product(name: "OpenCombine", package: "OpenCombine"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
