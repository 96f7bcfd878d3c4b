// swift-tools-version: 6.1
import PackageDescription

// The package-benchmark suite lives in its own package so that its harness (and the malloc
// interposer it loads) never enters FeedbackLoop's dependency graph. It reuses the scenario code
// of the root package's FeedbackBenchmarkScenarios target instead of copying it.
//
// Allocation counts come from package-benchmark's MallocInterposer trait: it works on Swift 6.3
// without any system package, so CI needs nothing installed for the allocation gate (jemalloc
// would need Debian's libjemalloc-dev and the deprecated jemalloc backend). Without `traits:` the
// resolution fails here: the default trait set pulls in a package this machine does not have.
let package = Package(
    name: "FeedbackLoopBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "FeedbackLoop", path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "FeedbackBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "FeedbackLoop", package: "FeedbackLoop"),
                .product(name: "FeedbackBenchmarkScenarios", package: "FeedbackLoop"),
            ],
            path: "Benchmarks/FeedbackBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ],
    swiftLanguageModes: [.v6]
)
