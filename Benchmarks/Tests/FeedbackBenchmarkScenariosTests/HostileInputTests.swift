import FeedbackLoop
import Foundation
import Testing

@testable import FeedbackBenchmarkScenarios
@testable import feedback_bench

/// The command line's answers to hostile but fair input (issue 17, items 7 to 9): sizes that would
/// overflow, saved reports with huge values or that are not reports at all, and `--output`
/// destinations that are not regular files.
@Suite struct HostileInputTests {
    // MARK: Sizes (item 8)

    @Test func sizesAboveTheMaximumAreRejectedAndTheMaximumScalesWithoutOverflow() throws {
        for events in [BenchmarkSize.maximumEvents + 1, 92_233_720_368_548, Int.max] {
            #expect(throws: ScenarioFailure.self) { try BenchmarkSize(events: events) }
        }
        let largest = try BenchmarkSize(events: BenchmarkSize.maximumEvents)
        #expect(largest.idleLoops == 100_000)
        #expect(largest.concurrentRequests == 1_000)
        #expect(largest.inFlightAtStop == 10_000)
        #expect(largest.backgroundLoops == 1_000)
        #expect(try BenchmarkSize(events: 1).idleLoops == 2)
        #expect(try BenchmarkSize(events: 50_000).idleLoops == 50_000)
    }

    // MARK: Rendering saved reports (item 9)

    static func report(value: Double) -> BenchmarkReport {
        BenchmarkReport(
            date: "2026-11-24T00:00:00Z", processors: 2, size: BenchmarkSize(preset: .small),
            backends: ["callback", "actor"],
            scenarios: [
                ScenarioReport(
                    scenario: .throughput, limit: "bare",
                    rows: [Measurement(label: "1 sender", metric: "ns/event", better: .lower, limit: 3, values: ["callback": value, "actor": 0.09])]),
                ScenarioReport(
                    scenario: .loops, limit: "bare",
                    rows: [Measurement(label: "idle", metric: "bytes/loop", better: .lower, limit: 70, values: ["callback": 700, "actor": 2_000])],
                    failures: ["actor: lost an event"]),
            ])
    }

    @Test(arguments: [9.22e18, 9.3e18, 1e300, -1e19, Double(Int.max)])
    func valuesBeyondIntRenderInEveryFormat(value: Double) throws {
        let report = Self.report(value: value)
        for format in ReportFormat.allCases { _ = try format.render(report) }
        #expect(ReportFormat.number(9.3e18) == "9.3e+18")
        #expect(ReportFormat.number(123_456_789_012) == "123,456,789,012")
        #expect(ReportFormat.number(-1_234.4) == "-1,234")
        #expect(ReportFormat.number(.infinity) == "inf")
    }

    @Test func aRatioBelowOneKeepsItsDigits() throws {
        // A ratio recorded as a figure (`service`'s "× parked task" rows) goes through `number`.
        #expect(ReportFormat.number(2.1e-5) == "2.1e-05")
        #expect(ReportFormat.number(-2.1e-5) == "-2.1e-05")
        #expect(ReportFormat.number(0.0689) == "0.069")
        #expect(ReportFormat.number(0) == "0")
        #expect(ReportFormat.ratio(0.03) == "0.03")
        #expect(ReportFormat.ratio(0.0042) == "0.0042")
        #expect(ReportFormat.ratio(0.5) == "0.5")
        #expect(ReportFormat.ratio(14.1) == "14.1")
        #expect(ReportFormat.ratio(198.4) == "198")
        let table = try ReportFormat.table.render(Self.report(value: 48))
        #expect(table.contains("| 0.03 "), "\(table)")
        #expect(!table.contains("| 0.0 "))
    }

    @Test func renderHonoursBackendAndScenario() throws {
        let report = Self.report(value: 48)
        let actorLoops = try SavedReport.select(report, backends: ["actor"], scenarios: [.loops])
        #expect(actorLoops.backends == ["actor"])
        #expect(actorLoops.scenarios.map(\.scenario) == [.loops])
        #expect(actorLoops.scenarios[0].rows[0].values == ["actor": 2_000])
        #expect(actorLoops.scenarios[0].failures == ["actor: lost an event"])
        let callback = try SavedReport.select(report, backends: ["callback"], scenarios: nil)
        #expect(callback.scenarios.count == 2)
        #expect(callback.scenarios[1].failures.isEmpty)
        let table = try ReportFormat.table.render(callback)
        #expect(!table.contains("actor"))
        #expect(throws: SavedReport.Failure("the report has no figures for backend 'fiber'; it has callback, actor")) {
            try SavedReport.select(report, backends: ["fiber"], scenarios: nil)
        }
        #expect(throws: SavedReport.Failure("the report has no 'latency' scenario; it has throughput, loops")) {
            try SavedReport.select(report, backends: nil, scenarios: [.latency])
        }
    }

    @Test func renderOptionsCarryTheSelection() throws {
        let command = try #require(
            try FeedbackBench.parseAsRoot(["--render", "r.json", "--backend", "actor", "--scenario", "loops"]) as? FeedbackBench)
        let options = try command.options()
        #expect(options.renderBackends == ["actor"])
        #expect(options.renderScenarios == [.loops])
        let everything = try #require(try FeedbackBench.parseAsRoot(["--render", "r.json"]) as? FeedbackBench)
        #expect(try everything.options().renderBackends == nil)
        #expect(try everything.options().renderScenarios == nil)
    }

    @Test func unreadableReportsAreNamedWithWhatWasExpected() throws {
        let directory = try TemporaryDirectory()
        let notJSON = directory.path("bad.json")
        try Data("{\"date\": 1}".utf8).write(to: URL(fileURLWithPath: notJSON))
        let cases: [(String, String)] = [
            ("/dev/zero", "cannot render /dev/zero: not a regular file (expected a report saved with --format json)"),
            (directory.path("missing.json"), "no such file (expected a report saved with --format json)"),
            (directory.root, "it is a directory, not a report saved with --format json"),
            (notJSON, "not a feedback-bench report saved with --format json (date: "),
        ]
        for (path, message) in cases {
            do {
                _ = try SavedReport.read(path)
                Issue.record("\(path) was read")
            } catch {
                #expect(error.description.contains(message), "\(error.description)")
                #expect(!error.description.contains("The file"))
            }
        }
        let saved = directory.path("report.json")
        try Data(try ReportFormat.json.render(Self.report(value: 9.3e18)).utf8).write(to: URL(fileURLWithPath: saved))
        #expect(try SavedReport.read(saved) == Self.report(value: 9.3e18))
    }

    // MARK: --allocator (issue 16, item 2)

    @Test func aMissingJemallocSaysWhatToInstall() throws {
        #expect(throws: Allocator.Failure.self) { try Allocator.locateJemalloc(candidates: ["/nonexistent/libjemalloc.so.2"]) }
        do {
            _ = try Allocator.locateJemalloc(candidates: ["/nonexistent/libjemalloc.so.2"])
        } catch {
            #expect(error.description.contains("apt-get install libjemalloc-dev"))
            #expect(error.description.contains("/nonexistent/libjemalloc.so.2"))
        }
        #expect(try Allocator.locateJemalloc(candidates: ["/nonexistent", "/dev/null"]) == "/dev/null")
        // The test process runs on glibc's malloc.
        #expect(!Allocator.jemallocIsLoaded)
    }

    @Test func theReportRecordsTheAllocatorAndTheLoad() throws {
        var report = Self.report(value: 48)
        report.allocator = "jemalloc"
        report.loadAverage = [1.5, 9.25]
        let table = try ReportFormat.table.render(report)
        #expect(table.hasPrefix("feedback-bench 2026-11-24T00:00:00Z, 2 processors, 10000 events, allocator jemalloc, load average 1.5 → 9.2\n"))
        // Reports saved before the allocator was recorded still render.
        let json = try ReportFormat.json.render(Self.report(value: 48))
        #expect(!json.contains("allocator"))
        #expect(try JSONDecoder().decode(BenchmarkReport.self, from: Data(json.utf8)).allocator == nil)
    }

    // MARK: --output (item 7)

    @Test func aRegularFileIsReplacedAtomicallyAndKeepsItsMode() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("report.txt")
        #expect(try ReportDestination.check(path) == .replacing(path: path))
        try ReportDestination.check(path).write("first\n")
        chmod(path, 0o640)
        try ReportDestination.check(path).write("second\n")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "second\n")
        var info = stat()
        stat(path, &info)
        #expect(info.st_mode & 0o777 == 0o640)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.root) == ["report.txt"])
    }

    @Test func aSymbolicLinkIsWrittenThroughAndStaysALink() throws {
        let directory = try TemporaryDirectory()
        let target = directory.path("target.txt")
        let link = directory.path("link.txt")
        try Data("old\n".utf8).write(to: URL(fileURLWithPath: target))
        #expect(symlink(target, link) == 0)
        let destination = try ReportDestination.check(link)
        #expect(destination == .writingThrough(path: link))
        try destination.write("new\n")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "new\n")
    }

    @Test func aFIFOIsWrittenThroughAndStaysAFIFO() async throws {
        let directory = try TemporaryDirectory()
        let fifo = directory.path("pipe")
        #expect(mkfifo(fifo, 0o600) == 0)
        let destination = try ReportDestination.check(fifo)
        #expect(destination == .writingThrough(path: fifo))
        // The reader runs on its own thread: opening a FIFO blocks until both ends are open.
        let reader = Task.detached { () -> String in
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: fifo))
            defer { try? handle.close() }
            return String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        }
        try destination.write("through the pipe\n")
        #expect(try await reader.value == "through the pipe\n")
        var info = stat()
        lstat(fifo, &info)
        #expect(info.st_mode & S_IFMT == S_IFIFO)
    }

    @Test func aFullDeviceIsAnErrorNotASuccess() throws {
        // `#require`, not `#expect`: a regression to renaming over the destination would replace
        // the machine's /dev/full with a regular file (the tests may run as root).
        let destination = try ReportDestination.check("/dev/full")
        try #require(destination == .writingThrough(path: "/dev/full"))
        #expect(throws: ReportDestination.Failure("cannot write the report to /dev/full: no space left on device")) {
            try destination.write("report\n")
        }
        var info = stat()
        lstat("/dev/full", &info)
        #expect(info.st_mode & S_IFMT == S_IFCHR)
    }

    @Test func destinationsThatCannotTakeAReportAreRejectedBeforeTheRun() throws {
        let directory = try TemporaryDirectory()
        let dangling = directory.path("dangling")
        #expect(symlink(directory.path("nowhere/x"), dangling) == 0)
        #expect(throws: ReportDestination.Failure("cannot write the report to \(dangling): it is a symbolic link to something that does not exist")) {
            try ReportDestination.check(dangling)
        }
        #expect(throws: ReportDestination.Failure("cannot write the report to /nowhere/x: the directory /nowhere does not exist")) {
            try ReportDestination.check("/nowhere/x")
        }
        #expect(try ReportDestination.check("-") == .standardOutput)
        #expect(try ReportDestination.check("relative-name.txt") == .replacing(path: "relative-name.txt"))
    }
}

/// A directory removed with everything in it when the value goes away.
final class TemporaryDirectory {
    let root: String

    init() throws {
        var template = Array("\(NSTemporaryDirectory())/feedback-bench-tests.XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw CocoaError(.fileWriteUnknown)
        }
        root = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func path(_ name: String) -> String { "\(root)/\(name)" }

    deinit { try? FileManager.default.removeItem(atPath: root) }
}
