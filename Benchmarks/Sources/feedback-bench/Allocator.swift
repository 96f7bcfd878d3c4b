#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `--allocator`: the malloc the scenarios run on. The asynchronous backends allocate per wake-up
/// and per effect, so the allocator moves their figures; the report records which one ran.
///
/// jemalloc cannot be switched on inside a running process (everything allocated so far belongs
/// to glibc's malloc), so `--allocator jemalloc` re-executes the command with Debian's
/// `libjemalloc.so.2` in `LD_PRELOAD`, and the new process checks that jemalloc really is the
/// malloc in use before measuring anything.
enum Allocator: String, CaseIterable, Sendable {
    case system, jemalloc

    /// Set in the re-executed process's environment, so it knows jemalloc was asked for.
    static let environmentKey = "FEEDBACK_BENCH_ALLOCATOR"
    /// Overrides where the library is looked for.
    static let libraryKey = "FEEDBACK_BENCH_JEMALLOC"

    /// Where Debian's libjemalloc2 (a dependency of libjemalloc-dev) puts the library.
    static let debianLibraries = [
        "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
        "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2",
        "/usr/lib/libjemalloc.so.2",
        "/usr/local/lib/libjemalloc.so.2",
    ]

    struct Failure: Error, CustomStringConvertible, Equatable {
        var description: String
    }

    /// The first of `candidates` that exists, or a failure that says what to install.
    static func locateJemalloc(candidates: [String]) throws(Failure) -> String {
        if let found = candidates.first(where: { access($0, R_OK) == 0 }) { return found }
        throw Failure(
            description: """
                --allocator jemalloc: libjemalloc.so.2 not found (looked in \(candidates.joined(separator: ", "))); \
                install Debian's libjemalloc-dev (apt-get install libjemalloc-dev), or set \(libraryKey) to the library's path
                """)
    }

    /// Whether jemalloc is the malloc of this process: only jemalloc defines `mallctl`.
    static var jemallocIsLoaded: Bool {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallctl") != nil
    }

    static func environment(_ key: String) -> String? {
        getenv(key).map { String(cString: $0) }
    }

    /// Makes this process run on `self`: nothing for `system`; for `jemalloc`, re-executes the
    /// command with the library preloaded (this call does not return then), or, in the
    /// re-executed process, checks that it took.
    func activate() throws(Failure) {
        switch self {
        case .system:
            if Self.environment(Self.environmentKey) == Allocator.jemalloc.rawValue || Self.jemallocIsLoaded {
                throw Failure(description: "--allocator system, but jemalloc is preloaded (unset LD_PRELOAD)")
            }
        case .jemalloc:
            if Self.environment(Self.environmentKey) == Allocator.jemalloc.rawValue {
                guard Self.jemallocIsLoaded else {
                    throw Failure(description: "--allocator jemalloc: the library was preloaded but is not the malloc in use")
                }
                return
            }
            let candidates = Self.environment(Self.libraryKey).map { [$0] } ?? Self.debianLibraries
            let library = try Self.locateJemalloc(candidates: candidates)
            let preload = [library, Self.environment("LD_PRELOAD")].compactMap { $0 }.filter { !$0.isEmpty }
            setenv("LD_PRELOAD", preload.joined(separator: ":"), 1)
            setenv(Self.environmentKey, rawValue, 1)
            let arguments = CommandLine.arguments
            var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
            execv("/proc/self/exe", &argv)
            throw Failure(description: "--allocator jemalloc: cannot re-execute \(arguments[0]): \(String(cString: strerror(errno)))")
        }
    }
}
