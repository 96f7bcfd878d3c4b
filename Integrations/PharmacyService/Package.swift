// swift-tools-version: 6.1
import PackageDescription

// The pharmacies example as an HTTP service: one FeedbackLoop per session, run under a
// ServiceGroup with FeedbackLoopServices. A package of its own so that Hummingbird and its
// HTTP stack never enter the root package's build or test run.
let package = Package(
    name: "PharmacyService",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "pharmacy-service", targets: ["pharmacy-service"])
    ],
    dependencies: [
        .package(name: "FeedbackLoop", path: "../../"),
        // The default traits minus swift-configuration support, which this service does not use.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Already built for Hummingbird; the integration test speaks HTTP/1.1 over its NIOHTTP1 codec.
        // Not AsyncHTTPClient (nor HummingbirdTesting, which depends on it): that would add
        // swift-nio-ssl with BoringSSL, swift-nio-http2, swift-configuration and swift-algorithms to
        // every cold build, for plain-text requests on loopback.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // Both already built for Hummingbird: the connection guard is a channel handler on its
        // HTTP parts (NIOHTTPTypes) and answers parse errors (NIOHTTP1).
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // Durable sessions on PostgreSQL (--journal-postgres); the SQLite journal comes with the root package.
        .package(name: "FeedbackLoopPostgres", path: "../FeedbackLoopPostgres"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        .target(
            name: "PharmacyServer",
            dependencies: [
                .product(name: "FeedbackLoopServices", package: "FeedbackLoop"),
                .product(name: "FeedbackExamples", package: "FeedbackLoop"),
                .product(name: "FeedbackLoopDurable", package: "FeedbackLoop"),
                .product(name: "FeedbackLoopPostgres", package: "FeedbackLoopPostgres"),
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
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
