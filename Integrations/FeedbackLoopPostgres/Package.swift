// swift-tools-version: 6.1
import PackageDescription

// FeedbackLoopPostgres is now a product of the root package, behind its trait "Postgres":
//
//     .package(url: "https://github.com/OWNER/FeedbackLoop", branch: "main", traits: ["Postgres"]),
//     .product(name: "FeedbackLoopPostgres", package: "FeedbackLoop"),
//
// This package keeps the old lines working for one release — `.package(path: "…/Integrations/
// FeedbackLoopPostgres")` and `.product(name: "FeedbackLoopPostgres", package: "FeedbackLoopPostgres")`
// — by re-exporting the new product, with a warning that says what to write. It goes away in the
// next release. If your package also depends on FeedbackLoop directly, that line must name
// "Postgres" too: SwiftPM 6.1-6.3 cannot resolve FeedbackLoop asked for two trait sets.
let package = Package(
    name: "FeedbackLoopPostgres",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "FeedbackLoopPostgres", targets: ["FeedbackLoopPostgresForwarder"])
    ],
    dependencies: [
        .package(name: "FeedbackLoop", path: "../../", traits: ["Postgres"])
    ],
    targets: [
        .target(
            name: "FeedbackLoopPostgresForwarder",
            dependencies: [.product(name: "FeedbackLoopPostgres", package: "FeedbackLoop")]
        )
    ],
    swiftLanguageModes: [.v6]
)
