/// How large the load tests run.
///
/// The contract's figures (8 threads × 100,000 events, a 1,000,000-event chain, 10,000 loops or
/// effects) hold in the plain build. ThreadSanitizer slows every memory access several times over
/// and serialises much of the rest, so its build (`-Xswiftc -DTSAN`) runs the same tests at a
/// tenth of the size: still far more interleavings than any race needs, and still a chain far
/// deeper than a recursive implementation's stack could hold.
enum Scale {
    #if TSAN
    static let divisor = 10
    #else
    static let divisor = 1
    #endif

    static func of(_ count: Int) -> Int { count / divisor }
}
