// swift-tools-version: 6.1
import PackageDescription

// The examples: the README's runnable examples (Readme/), the articles' features (FeedbackExamples, run by `feedback-examples`), the replay
// check of a durable feature (`feedback-journal`), and the pharmacies example as an HTTP service
// (`pharmacy-service`: one loop per session under a ServiceGroup, durable sessions on SQLite or
// PostgreSQL). A package of its own so that Hummingbird, its HTTP stack and swift-argument-parser
// never enter an adopter's graph. From the repository's root:
//
//     swift run --package-path Examples feedback-examples
//     .ci/postgres.sh Examples/test.sh          (every test here, PostgreSQL ones included)
//
// It depends on the root once, with every trait (the root's own `--enable-all-traits` set): the
// examples use every product, and one trait set means no graph asks FeedbackLoop for two
// (SwiftPM 6.1-6.3 cannot resolve that).
let package = Package(
    name: "FeedbackLoopExamples",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "feedback-examples", targets: ["feedback-examples"]),
        .executable(name: "feedback-journal", targets: ["feedback-journal"]),
        .executable(name: "pharmacy-service", targets: ["pharmacy-service"]),
        .executable(name: "TwentyLines", targets: ["TwentyLines"]),
        .executable(name: "RecordAndReplay", targets: ["RecordAndReplay"]),
        .executable(name: "LoopAsAService", targets: ["LoopAsAService"]),
        .executable(name: "DurableOrders", targets: ["DurableOrders"]),
    ],
    dependencies: [
        .package(name: "FeedbackLoop", path: "../", traits: ["Testing", "Services", "Durable", "Tracing", "Postgres"]),
        .package(url: "https://github.com/pointfreeco/swift-clocks", from: "1.1.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // The default traits minus swift-configuration support, which this service does not use.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Already built for Hummingbird; the integration test speaks HTTP/1.1 over its NIOHTTP1 codec.
        // Not AsyncHTTPClient (nor HummingbirdTesting, which depends on it): that would add
        // swift-nio-ssl with BoringSSL, swift-nio-http2, swift-configuration and swift-algorithms to
        // every cold build, for plain-text requests on loopback.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // Both already built for Hummingbird: the connection guard is a channel handler on its
        // HTTP parts (NIOHTTPTypes) and answers parse errors (NIOHTTP1).
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // Durable sessions on PostgreSQL (--journal-postgres).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // Traces: the server's request spans (Hummingbird's TracingMiddleware) and its loops' (FeedbackLoopTracing) take
        // the tracer that pharmacy-service bootstraps with swift-otel, exporting over OTLP/HTTP only (its gRPC
        // exporter would add grpc-swift to every cold build); the tests use InMemoryTracing.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // MARK: The README's examples
        // Readme/: one file each, shown verbatim in README.md (.ci/readme-snippets.py checks it),
        // built and run by CI; top-level code, so no `main.swift`.
        .executableTarget(
            name: "TwentyLines",
            dependencies: [.product(name: "FeedbackLoop", package: "FeedbackLoop")],
            path: "Readme", sources: ["TwentyLines.swift"]
        ),
        .executableTarget(
            name: "RecordAndReplay",
            dependencies: [.product(name: "FeedbackLoopRecording", package: "FeedbackLoop")],
            path: "Readme", sources: ["RecordAndReplay.swift"]
        ),
        .executableTarget(
            name: "LoopAsAService",
            dependencies: [.product(name: "FeedbackLoopServices", package: "FeedbackLoop")],
            path: "Readme", sources: ["LoopAsAService.swift"]
        ),
        .executableTarget(
            name: "DurableOrders",
            dependencies: [.product(name: "FeedbackLoopDurable", package: "FeedbackLoop")],
            path: "Readme", sources: ["DurableOrders.swift"]
        ),

        // MARK: Examples from the articles
        .target(
            name: "FeedbackExamples",
            dependencies: [
                .product(name: "FeedbackLoop", package: "FeedbackLoop"),
                .product(name: "Clocks", package: "swift-clocks"),
            ],
            exclude: ["README.md"]
        ),
        .executableTarget(
            name: "feedback-examples",
            dependencies: [
                "FeedbackExamples",
                .product(name: "FeedbackLoop", package: "FeedbackLoop"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Support/CoreLock.swift is a link to the core's Lock.swift (package-visible there), the
        // lock these tests' helpers were written with.
        .testTarget(
            name: "FeedbackExamplesTests",
            dependencies: [
                "FeedbackExamples",
                .product(name: "FeedbackLoopTesting", package: "FeedbackLoop"),
                .product(name: "FeedbackLoopRecording", package: "FeedbackLoop"),
                .product(name: "Clocks", package: "swift-clocks"),
            ]
        ),
        // The replay check of the example feature Tally: what users write for their own.
        .executableTarget(
            name: "feedback-journal",
            dependencies: [.product(name: "FeedbackLoopDurableTesting", package: "FeedbackLoop")]
        ),

        // MARK: The pharmacies example as an HTTP service
        .target(
            name: "PharmacyServer",
            dependencies: [
                "FeedbackExamples",
                .product(name: "FeedbackLoopServices", package: "FeedbackLoop"),
                .product(name: "FeedbackLoopDurable", package: "FeedbackLoop"),
                .product(name: "FeedbackLoopPostgres", package: "FeedbackLoop"),
                .product(name: "FeedbackLoopTracing", package: "FeedbackLoop"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                // NIOLock: the server's locks, which ThreadSanitizer understands (see LockedValue).
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .executableTarget(
            name: "pharmacy-service",
            dependencies: [
                "PharmacyServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // The event loops Hummingbird serves on, for --pin-sessions.
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        .testTarget(
            name: "PharmacyServerTests",
            dependencies: [
                "PharmacyServer",
                // SQLiteJournal: a test reads a journal the server wrote.
                .product(name: "FeedbackLoopDurable", package: "FeedbackLoop"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            // A journal version 1 of the durable session wrote (EvolvedDurableSessionTests).
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
