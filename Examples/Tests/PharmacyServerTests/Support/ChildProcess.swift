import Foundation
import Glibc

/// A child process started with `posix_spawn`, for the tests that run `pharmacy-service`.
///
/// Not Foundation's `Process`: beside its spawns, fresh loopback connections of the test process
/// failed with "I/O on closed channel" before their request was written, and one run crashed
/// inside `Process.run()`; descriptors closed under their owner are a known class of its bugs on
/// Linux (its child-exit watch closes a socketpair descriptor when it is invalidated, its pipes'
/// file handles close on deallocation; swiftlang/swift#57827). Here every descriptor has one
/// owner that closes it exactly once: the parent's ends of the pipes are opened with `O_CLOEXEC`
/// (so no child inherits them), the write ends are closed right after the spawn, and each read
/// end by the thread that reads it, at its end. The child gets standard input from `/dev/null`
/// and nothing of ours but the standard output and error asked for.
///
/// The blocking calls (`waitid`, `read`) run on threads of their own, never on the cooperative
/// pool the in-process servers need.
final class ChildProcess: Sendable {
    /// Where one of the child's standard streams goes.
    enum Output: Sendable {
        /// The test process's own stream (what a failing test shows).
        case inherit
        /// `/dev/null`.
        case discard
        /// A pipe whose lines ``ChildProcess/standardOutput`` or ``ChildProcess/standardError``
        /// deliver.
        case pipe
    }

    /// How the child ended.
    struct Termination: Sendable, Equatable, CustomStringConvertible {
        /// The exit status, or the signal that ended the process if `signalled`.
        var status: Int32
        var signalled: Bool

        var description: String { signalled ? "killed by signal \(status)" : "exited \(status)" }
    }

    struct SpawnFailed: Error, CustomStringConvertible {
        var description: String
    }

    let pid: pid_t
    /// The lines the child writes to standard output when it goes to a ``Output/pipe`` (none
    /// otherwise); they end when the child (and any process it passed the pipe to) closes it.
    /// Read by one task at a time.
    let standardOutput: AsyncStream<String>
    /// The lines of standard error, as ``standardOutput``.
    let standardError: AsyncStream<String>

    private let exit = ValueGate<Termination>()
    /// Whether the child was reaped. `kill` sends a signal only while it is not, under the lock
    /// the waiting thread reaps under: once reaped, the pid may belong to another process.
    private let reaped = Locked(false)

    /// Starts `executable` with `arguments` (without the program name).
    ///
    /// - Throws: ``SpawnFailed`` if a pipe cannot be made or the process cannot be started.
    init(_ executable: String, _ arguments: [String], standardOutput: Output, standardError: Output) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)

        // The parent's ends of the pipes: read ends go to their reader threads, write ends are
        // closed once the child has its copies.
        var readEnds: [Int32?] = [nil, nil]
        var writeEnds: [Int32] = []
        defer { for fd in writeEnds { close(fd) } }
        for (index, (output, target)) in [(standardOutput, STDOUT_FILENO), (standardError, STDERR_FILENO)].enumerated() {
            switch output {
            case .inherit:
                break
            case .discard:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            case .pipe:
                var fds: [Int32] = [-1, -1]
                guard Self.pipe2(&fds, O_CLOEXEC) == 0 else {
                    let error = errno
                    for case let fd? in readEnds { close(fd) }
                    throw SpawnFailed(description: "pipe2: \(String(cString: strerror(error)))")
                }
                readEnds[index] = fds[0]
                writeEnds.append(fds[1])
                // dup2 clears O_CLOEXEC on the child's copy only.
                posix_spawn_file_actions_adddup2(&actions, fds[1], target)
            }
        }

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else {
            for case let fd? in readEnds { close(fd) }
            throw SpawnFailed(description: "posix_spawn \(executable): \(String(cString: strerror(spawned)))")
        }
        self.pid = pid
        self.standardOutput = readEnds[0].map { Self.lines(of: $0) } ?? AsyncStream { $0.finish() }
        self.standardError = readEnds[1].map { Self.lines(of: $0) } ?? AsyncStream { $0.finish() }

        let (child, exit, reaped) = (pid, self.exit, self.reaped)
        Thread {
            // Waits without reaping, then reaps under `reaped`'s lock, so that `kill` never
            // signals a pid that was reaped (and perhaps reused).
            var info = siginfo_t()
            while waitid(P_PID, id_t(child), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
            var status: Int32 = 0
            reaped.withLock { reaped in
                while waitpid(child, &status, 0) == -1 && errno == EINTR {}
                reaped = true
            }
            // The <sys/wait.h> macros, which Swift does not import: the low 7 bits are the
            // signal that ended the process (0 if it exited), the next byte its exit status.
            let signal = status & 0x7f
            exit.open(with: signal == 0
                ? Termination(status: (status >> 8) & 0xff, signalled: false)
                : Termination(status: signal, signalled: true))
        }.start()
    }

    /// How the process ended, once it has.
    ///
    /// - Throws: `CancellationError` if the waiting task is cancelled first.
    var exited: Termination {
        get async throws { try await exit.value }
    }

    /// Whether the process has not been reaped yet.
    var isRunning: Bool { !exit.isOpen }

    /// Sends `signal` to the process, unless it was already reaped.
    func kill(_ signal: Int32) {
        reaped.withLock { reaped in
            if !reaped { _ = Glibc.kill(pid, signal) }
        }
    }

    /// glibc's `pipe2`, which Swift's Glibc module does not import (it is a GNU extension):
    /// `pipe` and then `fcntl(FD_CLOEXEC)` would let a child spawned in between inherit the pipe,
    /// and hold its write end open after ours is closed.
    private static let pipe2 = unsafeBitCast(
        dlsym(dlopen(nil, RTLD_NOW), "pipe2"),
        to: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32).self)

    /// The lines read from `fd` on a thread of its own, which closes `fd` at its end.
    private static func lines(of fd: Int32) -> AsyncStream<String> {
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        Thread {
            defer { close(fd) }
            var line: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count == -1 && errno == EINTR { continue }
                guard count > 0 else { break }
                for byte in buffer[..<count] {
                    if byte == UInt8(ascii: "\n") {
                        continuation.yield(String(decoding: line, as: UTF8.self))
                        line.removeAll(keepingCapacity: true)
                    } else {
                        line.append(byte)
                    }
                }
            }
            if !line.isEmpty { continuation.yield(String(decoding: line, as: UTF8.self)) }
            continuation.finish()
        }.start()
        return lines
    }
}
