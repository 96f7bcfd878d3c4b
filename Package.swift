// swift-tools-version: 6.1
import PackageDescription

// ThreadSanitizer cannot see inside `Synchronization.Mutex` (it reports false races under
// contention), so `Lock` switches to pthread_mutex when the package is built with
// `-Xswiftc -DTSAN`. Nothing else changes between the two builds.
let package = Package(
    name: "FeedbackLoop",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "FeedbackLoop", targets: ["FeedbackLoop"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .target(
            name: "FeedbackLoop",
            dependencies: [.product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "FeedbackLoopTests",
            dependencies: ["FeedbackLoop"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
