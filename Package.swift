// swift-tools-version: 6.1
import PackageDescription

// The core (FeedbackLoop, FeedbackLoopRecording) depends on swift-log and on swift-distributed-tracing's
// smallest product, `Instrumentation` (for `ServiceContext`), alone. Every heavier product
// needs its package trait, and every library target's dependency on a heavier package is guarded by
// that trait, so an adopter resolves only the packages of the traits it names:
//
//     .package(url: "https://github.com/OWNER/FeedbackLoop", branch: "main", traits: ["Testing"])
//
// Nothing is on by default: a package that names no trait gets the core, swift-log and swift-distributed-tracing, nothing
// else (.ci/adopter-footprint.sh checks the exact list per trait). A guarded product used without
// its trait stops the build with an #error naming the line to write. In this repository, build and
// test with every trait: `swift test --enable-all-traits`; the one exception is the ThreadSanitizer
// run, which leaves Postgres out (see Sources/FeedbackLoopPostgres/PackageTrait.swift):
// `swift test --traits Testing,Services,Durable,Tracing --sanitize=thread -Xswiftc -DTSAN`, with
// TSAN_OPTIONS=suppressions=$PWD/.ci/tsan-suppressions.txt (one known false report, explained there).
//
// Benchmarks/ and Examples/ are packages of their own that depend on this one by path, so that the
// benchmark harness, the peer's reactive framework and the HTTP server never enter an adopter's
// graph. Test targets need no trait conditions: a dependency's test targets are never resolved for
// its adopters.
//
// ThreadSanitizer cannot see inside `Synchronization.Mutex` (it reports false races under
// contention), so the internal `Lock` switches to pthread_mutex when built with
// `-Xswiftc -DTSAN`. Nothing else changes between the two builds.
let package = Package(
    name: "FeedbackLoop",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "FeedbackLoop", targets: ["FeedbackLoop"]),
        .library(name: "FeedbackLoopRecording", targets: ["FeedbackLoopRecording"]),
        .library(name: "FeedbackLoopTesting", targets: ["FeedbackLoopTesting"]),
        .library(name: "FeedbackLoopServices", targets: ["FeedbackLoopServices"]),
        .library(name: "FeedbackLoopDurable", targets: ["FeedbackLoopDurable"]),
        .library(name: "FeedbackLoopDurableTesting", targets: ["FeedbackLoopDurableTesting"]),
        .library(name: "FeedbackLoopPostgres", targets: ["FeedbackLoopPostgres"]),
        .library(name: "FeedbackLoopTracing", targets: ["FeedbackLoopTracing"]),
    ],
    traits: [
        .trait(
            name: "Testing",
            description: "FeedbackLoopTesting (and, with Durable, FeedbackLoopDurableTesting): swift-clocks, swift-custom-dump, xctest-dynamic-overlay"
        ),
        .trait(name: "Services", description: "FeedbackLoopServices: swift-service-lifecycle, swift-metrics"),
        .trait(name: "Tracing", description: "FeedbackLoopTracing, spans for reduced events and effects: swift-distributed-tracing's Tracing"),
        .trait(name: "Durable", description: "FeedbackLoopDurable and its SQLite journal: GRDB.swift (Debian's libsqlite3-dev)"),
        .trait(
            name: "Postgres",
            description: "FeedbackLoopPostgres, the PostgreSQL journal: postgres-nio (swift-nio), swift-service-lifecycle",
            enabledTraits: ["Durable"]
        ),
        // Empty on purpose: SwiftPM 6.1-6.3 cannot resolve a graph where FeedbackLoop is asked for
        // different trait sets, and a non-empty default is one more set to disagree with.
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // `ServiceContext` only (its `Instrumentation` product): the core carries a caller's context to effects.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/pointfreeco/swift-clocks", from: "1.1.1"),
        .package(url: "https://github.com/pointfreeco/swift-custom-dump", from: "1.7.3"),
        .package(url: "https://github.com/pointfreeco/xctest-dynamic-overlay", from: "1.13.1"),
        // Durable loops' embedded store; needs Debian's libsqlite3-dev.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // Used by no target, so never fetched by an adopter.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
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
                "FeedbackLoop", "SharedTestSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            ]
        ),
        // What more than one test target shares: bounded waits, gates, the one turn of the tests
        // that block a thread, the request context of the propagation tests, and span trees.
        .target(
            name: "SharedTestSupport",
            dependencies: [
                "FeedbackLoop", .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            path: "Tests/SharedTestSupport"
        ),

        // MARK: Recording and diagrams (no trait)
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

        // MARK: Test kit (trait Testing)
        .target(
            name: "FeedbackLoopTesting",
            dependencies: [
                "FeedbackLoop",
                "FeedbackLoopRecording",
                .product(name: "Clocks", package: "swift-clocks", condition: .when(traits: ["Testing"])),
                .product(name: "CustomDump", package: "swift-custom-dump", condition: .when(traits: ["Testing"])),
                // Failures reach Swift Testing and XCTest alike. IssueReporting finds the test
                // frameworks at run time through IssueReportingTestSupport; on Linux a test
                // binary without it reports "an issue was recorded without linking the Testing
                // framework" instead of failing, so the kit brings it to its users' test targets.
                .product(name: "IssueReporting", package: "xctest-dynamic-overlay", condition: .when(traits: ["Testing"])),
                .product(
                    name: "IssueReportingTestSupport", package: "xctest-dynamic-overlay", condition: .when(traits: ["Testing"])),
            ]
        ),
        .testTarget(
            name: "FeedbackLoopTestingTests",
            dependencies: [
                "FeedbackLoopTesting",
                "FeedbackLoopRecording",
                .product(name: "Clocks", package: "swift-clocks"),
            ]
        ),

        // MARK: Service integration (trait Services)
        .target(
            name: "FeedbackLoopServices",
            dependencies: [
                "FeedbackLoop",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Services"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Services"])),
                // Re-exported in part (see Exports.swift): `MetricsFactory`, `UnixSignal`.
                .product(name: "CoreMetrics", package: "swift-metrics", condition: .when(traits: ["Services"])),
                .product(name: "UnixSignals", package: "swift-service-lifecycle", condition: .when(traits: ["Services"])),
                // With the trait Tracing as well, a service's refused events and a registry's refused
                // uses get spans from LoopTracing (no package more to resolve: Tracing's package is the core's).
                .target(name: "FeedbackLoopTracing", condition: .when(traits: ["Tracing"])),
            ]
        ),
        .testTarget(
            name: "FeedbackLoopServicesTests",
            dependencies: [
                "FeedbackLoopServices", "FeedbackLoopTracing", "SharedTestSupport",
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]
        ),

        // MARK: Spans (trait Tracing). The same package as the core's `Instrumentation`: the trait
        // adds a product of it, no package.
        .target(
            name: "FeedbackLoopTracing",
            dependencies: [
                "FeedbackLoop",
                .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
            ]
        ),
        .testTarget(
            name: "FeedbackLoopTracingTests",
            dependencies: [
                "FeedbackLoopTracing", "FeedbackLoop", "SharedTestSupport",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),

        // MARK: Durable loops: the journal protocol, the durable loop and the SQLite store (trait
        // Durable); its test kit (traits Durable and Testing); the PostgreSQL store (trait Postgres).
        .target(
            name: "FeedbackLoopDurable",
            dependencies: [
                "FeedbackLoop",
                .product(name: "Logging", package: "swift-log"),
                // ServiceContext, carried from a sender through the journal into the loop.
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["Durable"])),
            ]
        ),
        .target(
            name: "FeedbackLoopDurableTesting",
            dependencies: [
                "FeedbackLoopDurable", "FeedbackLoop",
                // Failures worded and reported as TestLoop's (its package-visible FailureReport).
                "FeedbackLoopTesting",
                // Diffs and failures as in FeedbackLoopTesting (see there for the support product).
                .product(name: "CustomDump", package: "swift-custom-dump", condition: .when(traits: ["Testing"])),
                .product(name: "IssueReporting", package: "xctest-dynamic-overlay", condition: .when(traits: ["Testing"])),
                .product(
                    name: "IssueReportingTestSupport", package: "xctest-dynamic-overlay", condition: .when(traits: ["Testing"])),
            ]
        ),
        .testTarget(
            name: "FeedbackLoopDurableTests",
            dependencies: [
                "FeedbackLoopDurable", "FeedbackLoopDurableTesting", "FeedbackLoop", "SharedTestSupport",
                // Raw SQL, to damage journals as another tool would.
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            // Journals written by older versions of example features.
            resources: [.copy("Fixtures")]
        ),
        // postgres-nio brings swift-nio, swift-crypto and swift-nio-ssl: a 2.5-4.5 minute first build
        // on 2 cores, paid only by those who name the trait. Its tests need a running server:
        // `.ci/postgres.sh swift test --enable-all-traits --filter FeedbackLoopPostgresTests`.
        .target(
            name: "FeedbackLoopPostgres",
            dependencies: [
                "FeedbackLoopDurable",
                .product(name: "Logging", package: "swift-log"),
                // The inbox carries a sender's ServiceContext through the instrument's headers.
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Postgres"])),
            ]
        ),
        // Empty without the trait Postgres, as in the ThreadSanitizer build (see PackageTrait.swift).
        .testTarget(
            name: "FeedbackLoopPostgresTests",
            dependencies: [
                "FeedbackLoopPostgres", "FeedbackLoopDurable", "FeedbackLoopDurableTesting", "FeedbackLoop",
                "SharedTestSupport", .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Postgres"])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
