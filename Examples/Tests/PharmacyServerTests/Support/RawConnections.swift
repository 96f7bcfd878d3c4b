import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Plain TCP connections that the test controls byte by byte: silent ones, ones that send half a
/// request, many at once. Blocking calls run on a Dispatch thread, never on the concurrency pool
/// the server's handlers need.
// Unchecked: `descriptors` is written only by `open` (before the instance is shared) and by
// `closeAll`/`close(_:)`, which a test calls from one task while no other use is in progress.
final class RawConnections: @unchecked Sendable {
    private(set) var descriptors: [Int32] = []

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Opens `count` connections to 127.0.0.1:`port`, each sending `prefix` if not empty.
    static func open(_ count: Int, port: Int, sending prefix: String = "") async throws -> RawConnections {
        try raiseOpenFileLimit(toAtLeast: count * 2 + 256)
        let connections = RawConnections()
        try await onThread {
            for _ in 0..<count {
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                guard fd >= 0 else { throw Failure(description: "socket() failed: errno \(errno)") }
                connections.descriptors.append(fd)
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = in_port_t(UInt16(port).bigEndian)
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                let result = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                guard result == 0 else { throw Failure(description: "connect() failed: errno \(errno)") }
                if !prefix.isEmpty {
                    let sent = prefix.utf8CString.withUnsafeBufferPointer { send(fd, $0.baseAddress, $0.count - 1, 0) }
                    guard sent == prefix.utf8.count else { throw Failure(description: "send() failed: errno \(errno)") }
                }
            }
        }
        return connections
    }

    var count: Int { descriptors.count }

    /// Waits until the server has closed every connection (end of file or reset), for at most
    /// `timeout`. Returns what each connection received before the close, in order; throws if
    /// some are still open when `timeout` passes.
    func waitUntilServerClosesAll(timeout: Duration) async throws -> [String] {
        try await read(timeout: timeout, unfinished: { "\($0) of \($1) connections still open after \(timeout)" }) { _, _, closed in
            closed
        }
    }

    /// Reads from every connection until what each received contains `marker`, for at most
    /// `timeout` in all; returns what each received. Throws if a connection closes first, or the
    /// time runs out.
    func receiveOnEach(until marker: String, timeout: Duration) async throws -> [String] {
        try await read(
            timeout: timeout,
            unfinished: { "\($0) of \($1) connections did not receive '\(marker)' within \(timeout)" }
        ) { index, received, closed in
            if closed {
                throw Failure(description: "connection \(index) closed before it received '\(marker)': \(received)")
            }
            return received.contains(marker)
        }
    }

    /// Reads from every connection until `done(index, received so far, closed)` says that one is
    /// done (it may throw), for at most `timeout` in all; returns what each received.
    private func read(
        timeout: Duration,
        unfinished: @escaping @Sendable (_ left: Int, _ of: Int) -> String,
        done: @escaping @Sendable (Int, String, Bool) throws -> Bool
    ) async throws -> [String] {
        let descriptors = self.descriptors
        return try await Self.onThread {
            var received = [[UInt8]](repeating: [], count: descriptors.count)
            var waiting = Set(descriptors.indices)
            let deadline = ContinuousClock.now + timeout
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !waiting.isEmpty {
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero else { throw Failure(description: unfinished(waiting.count, descriptors.count)) }
                let indices = Array(waiting)
                var polls = indices.map { pollfd(fd: descriptors[$0], events: Int16(POLLIN), revents: 0) }
                let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
                guard poll(&polls, nfds_t(polls.count), milliseconds) >= 0 else {
                    throw Failure(description: "poll() failed: errno \(errno)")
                }
                for (slot, index) in indices.enumerated() where polls[slot].revents != 0 {
                    let count = recv(descriptors[index], &buffer, buffer.count, 0)
                    if count > 0 { received[index] += buffer[0..<count] }
                    if try done(index, String(decoding: received[index], as: UTF8.self), count <= 0) { waiting.remove(index) }
                }
            }
            return received.map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// Whether the server still holds every connection open: none has seen an end of file.
    func allStillOpen() -> Bool {
        var polls = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        return poll(&polls, nfds_t(polls.count), 0) == 0
    }

    /// Ends what connection `index` sends (a half-close): the server reads an end of input, and
    /// may still answer.
    func shutdownWrite(_ index: Int) {
        _ = shutdown(descriptors[index], Int32(SHUT_WR))
    }

    /// Closes one connection from the client side.
    func close(_ index: Int) {
        _ = Glibc.close(descriptors[index])
        descriptors[index] = -1
    }

    func closeAll() {
        for fd in descriptors where fd >= 0 { _ = Glibc.close(fd) }
        descriptors = []
    }

    deinit { closeAll() }

    private static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
        }
    }

    private func onThread(_ body: @escaping @Sendable () throws -> Void) async throws {
        try await Self.onThread(body)
    }

    /// Raises this process's soft limit on open files (both ends of each connection live here).
    static func raiseOpenFileLimit(toAtLeast needed: Int) throws {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        guard limit.rlim_cur < rlim_t(needed) else { return }
        guard limit.rlim_max >= rlim_t(needed) else {
            throw Failure(description: "the test needs \(needed) open files; the hard limit is \(limit.rlim_max)")
        }
        limit.rlim_cur = rlim_t(needed)
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
