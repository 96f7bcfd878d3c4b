import Foundation
import NIOHTTP1
import Testing

/// Real `pharmacy-service` processes for the fault tests, each killed when the test ends,
/// whether it passed, failed or threw: ``withServerProcesses(_:)`` sends SIGKILL to every one
/// still running (SIGKILL also ends a process stopped with SIGSTOP).
///
/// As a backstop for a test process that dies itself (or is killed by `test.sh`'s time limit),
/// each child's pid is appended to the file named by `PHARMACY_TEST_CHILDREN`, which `test.sh`
/// sets and reads on exit to kill what is left.
final class ServerProcesses: Sendable {
    /// One server process: its pid, its API on the port it printed, and its exit.
    struct Server: Sendable {
        let process: ChildProcess
        let api: APIClient
        let arguments: [String]

        var pid: Int32 { process.pid }

        /// Sends `signal` to the process.
        func signal(_ signal: Int32) {
            process.kill(signal)
        }

        /// Waits until the process has exited.
        var exited: Exited { Exited(process: process) }

        /// Sends SIGKILL and waits (bounded) until the process has exited.
        func kill9() async throws {
            signal(SIGKILL)
            try await bounded("pharmacy-service (pid \(pid)) to exit after SIGKILL") { try await exited.wait() }
        }
    }

    /// The exit of a server process, to wait for.
    struct Exited: Sendable {
        let process: ChildProcess

        /// - Throws: `CancellationError` if the waiting task is cancelled first.
        func wait() async throws {
            _ = try await process.exited
        }
    }

    private let running = Locked<[ChildProcess]>([])

    /// Starts `pharmacy-service` on a free port with `arguments` and returns once it listens.
    func start(_ arguments: [String]) async throws -> Server {
        let all = ["--port", "0"] + arguments
        // The server's log goes to the test's standard error: what a failing test shows.
        let process = try ChildProcess(
            try CommandTests.executable().path, all, standardOutput: .pipe, standardError: .inherit)
        running.withLock { $0.append(process) }
        Self.record(process.pid)
        let line = try await bounded("pharmacy-service \(all.joined(separator: " ")) to print its port") {
            await CommandTests.firstLine(of: process.standardOutput)
        }
        guard let line, line.hasPrefix("listening on "), let port = line.split(separator: ":").last.flatMap({ Int($0) })
        else {
            throw CommandTests.Missing(description: "pharmacy-service \(all.joined(separator: " ")) did not start: printed \(line ?? "nothing")")
        }
        return Server(process: process, api: APIClient(host: "127.0.0.1", port: port), arguments: all)
    }

    /// Kills every process still running and waits (bounded) for each to exit.
    func killAll() async {
        let processes = running.withLock { running in
            defer { running = [] }
            return running
        }
        for process in processes {
            process.kill(SIGKILL)
        }
        for process in processes {
            _ = try? await bounded("pharmacy-service (pid \(process.pid)) to exit after SIGKILL", within: .seconds(10)) {
                try await process.exited
            }
        }
    }

    /// Appends `pid` to the file `test.sh` names in `PHARMACY_TEST_CHILDREN`.
    private static func record(_ pid: Int32) {
        guard let file = ProcessInfo.processInfo.environment["PHARMACY_TEST_CHILDREN"] else { return }
        // O_CLOEXEC: no child started meanwhile inherits it.
        let fd = open(file, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let line = Array("\(pid)\n".utf8)
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}

/// Runs `body` with a set of server processes and kills every one of them afterwards, also
/// when `body` throws or a wait in it timed out.
func withServerProcesses<T: Sendable>(_ body: (ServerProcesses) async throws -> T) async throws -> T {
    let processes = ServerProcesses()
    do {
        let result = try await body(processes)
        await processes.killAll()
        return result
    } catch {
        await processes.killAll()
        throw error
    }
}

/// Asks `request` again every 20 ms until `isDone` accepts its reply, for at most `limit`;
/// returns the accepted reply, or fails naming `what` with the last reply seen.
///
/// For waits on another process (a lease to expire) that no event in this one announces: each
/// try is a real request, and the bound fails loudly.
func poll(
    _ what: String, within limit: Duration = .seconds(30),
    _ request: @escaping @Sendable () async throws -> APIClient.Reply,
    until isDone: @escaping @Sendable (APIClient.Reply) -> Bool
) async throws -> APIClient.Reply {
    let last = Locked<String>("no reply yet")
    return try await bounded(what, within: limit, diagnostics: { "last reply: " + last.withLock { $0 } }) {
        while true {
            let reply = try await request()
            if isDone(reply) { return reply }
            last.withLock { $0 = "\(reply.status.code) \(reply.body)" }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
