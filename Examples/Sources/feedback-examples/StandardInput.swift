import Foundation

/// Lines of standard input as an `AsyncStream`, read on a thread of their own so that a blocking
/// `readLine()` never holds one of the few threads of Swift's cooperative pool.
enum StandardInput {
    static func lines() -> AsyncStream<String> {
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        let reader = Thread {
            while let line = readLine() {
                continuation.yield(line)
            }
            continuation.finish()
        }
        reader.start()
        return lines
    }

    /// The lines of standard input, or `fallback` if standard input holds none; `onFallback` runs
    /// when the fallback is chosen.
    static func linesOrElse(_ fallback: [String], onFallback: () -> Void) async -> AsyncStream<String> {
        var input = lines().makeAsyncIterator()
        guard let first = await input.next() else {
            onFallback()
            return AsyncStream { continuation in
                for line in fallback { continuation.yield(line) }
                continuation.finish()
            }
        }
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        continuation.yield(first)
        Task {
            while let line = await input.next() {
                continuation.yield(line)
            }
            continuation.finish()
        }
        return lines
    }
}
