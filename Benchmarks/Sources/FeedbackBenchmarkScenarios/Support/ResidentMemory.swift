import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The process's resident set size, from `/proc/self/statm`.
enum ResidentMemory {
    /// Resident bytes now, or 0 where `/proc` is unavailable.
    static func bytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Lets glibc return freed pages to the system, so that an RSS reading after a scenario shows
    /// what is still held rather than what malloc keeps cached.
    static func trim() {
        #if canImport(Glibc)
        _ = glibcMallocTrim(0)
        #endif
    }
}

#if canImport(Glibc)
// glibc's `malloc_trim(size_t)`, which the Glibc module map does not export.
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32
#endif
