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
        let pid: Int32
        let api: APIClient
        let exited: Gate
        let arguments: [String]

        /// Sends `signal` to the process.
        func signal(_ signal: Int32) {
            kill(pid, signal)
        }

        /// Sends SIGKILL and waits (bounded) until the process has exited.
        func kill9() async throws {
            signal(SIGKILL)
            try await bounded("pharmacy-service (pid \(pid)) to exit after SIGKILL") { try await exited.wait() }
        }
    }

    private let running = Locked<[Int32: (process: Process, exited: Gate)]>([:])

    /// Starts `pharmacy-service` on a free port with `arguments` and returns once it listens.
    func start(_ arguments: [String]) async throws -> Server {
        let process = Process()
        process.executableURL = try CommandTests.executable()
        let all = ["--port", "0"] + arguments
        process.arguments = all
        let output = Pipe()
        process.standardOutput = output
        // The server's log goes to the test's standard error: what a failing test shows.
        process.standardError = FileHandle.standardError
        let exited = Gate()
        process.terminationHandler = { _ in exited.open() }
        try process.run()
        let pid = process.processIdentifier
        running.withLock { $0[pid] = (process, exited) }
        if let file = ProcessInfo.processInfo.environment["PHARMACY_TEST_CHILDREN"],
            let handle = FileHandle(forWritingAtPath: file)
        {
            handle.seekToEndOfFile()
            handle.write(Data("\(pid)\n".utf8))
            try? handle.close()
        }
        let line = try await bounded("pharmacy-service \(all.joined(separator: " ")) to print its port") {
            try await Self.firstLine(of: output.fileHandleForReading)
        }
        guard let line, line.hasPrefix("listening on "), let port = line.split(separator: ":").last.flatMap({ Int($0) })
        else {
            throw CommandTests.Missing(description: "pharmacy-service \(all.joined(separator: " ")) did not start: printed \(line ?? "nothing")")
        }
        return Server(pid: pid, api: APIClient(host: "127.0.0.1", port: port), exited: exited, arguments: all)
    }

    /// Kills every process still running and waits (bounded) for each to exit.
    func killAll() async {
        let processes = running.withLock { running in
            defer { running = [:] }
            return Array(running.values)
        }
        for (process, _) in processes where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
        for (process, exited) in processes {
            _ = try? await bounded("pharmacy-service (pid \(process.processIdentifier)) to exit after SIGKILL", within: .seconds(10)) {
                try await exited.wait()
            }
        }
    }

    private static func firstLine(of handle: FileHandle) async throws -> String? {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                var bytes: [UInt8] = []
                while true {
                    let chunk = handle.readData(ofLength: 1)
                    guard let byte = chunk.first else { break }
                    if byte == UInt8(ascii: "\n") { break }
                    bytes.append(byte)
                }
                continuation.resume(returning: bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self))
            }
        }
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
