#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Monotonic time in nanoseconds, read straight from `clock_gettime`: a vDSO call of a few tens of
/// nanoseconds with no allocation, cheap enough to stamp every event of a latency run.
enum Nanoseconds {
    @inline(__always)
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// Nanoseconds elapsed while `body` ran.
    @inline(__always)
    static func measure(_ body: () throws -> Void) rethrows -> UInt64 {
        let start = now()
        try body()
        return now() &- start
    }

    /// Nanoseconds elapsed while `body` ran.
    static func measure(_ body: () async throws -> Void) async rethrows -> UInt64 {
        let start = now()
        try await body()
        return now() &- start
    }

    /// Spins until the monotonic clock reaches `deadline`. Open-loop senders use it: sleeping
    /// would wake late by tens of microseconds and skew the intended send times it exists to keep.
    @inline(__always)
    static func spin(until deadline: UInt64) {
        while now() < deadline {}
    }
}
