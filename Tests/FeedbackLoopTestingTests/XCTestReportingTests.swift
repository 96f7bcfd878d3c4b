import Foundation
import XCTest

import FeedbackLoopTesting

/// A test loop's failures fail an `XCTestCase` too, not only a Swift Testing test.
///
/// corelibs-xctest has no `XCTExpectFailure`, so the failing case runs in a child process — this
/// test binary, asked to run just that case — and the parent checks that it failed, and why.
final class XCTestReportingTests: XCTestCase {
    func testAWrongAssertionFailsAnXCTestCase() throws {
        let run = try runProbe("testWrongMutation")
        XCTAssertNotEqual(run.status, 0, run.output)
        XCTAssertTrue(run.output.contains("State mismatch: sending Ticker.Event.increment"), run.output)
        XCTAssertTrue(run.output.contains("Executed 1 test, with 1 failure"), run.output)
    }

    func testAnEffectStillRunningFailsAnXCTestCase() throws {
        let run = try runProbe("testEffectStillRunning")
        XCTAssertNotEqual(run.status, 0, run.output)
        XCTAssertTrue(run.output.contains(#"Effect still running at the end of the test: "ticker""#), run.output)
    }

    func testARightAssertionPassesAnXCTestCase() throws {
        let run = try runProbe("testRightMutation")
        XCTAssertEqual(run.status, 0, run.output)
        XCTAssertTrue(run.output.contains("Executed 1 test, with 0 failures"), run.output)
    }

    /// Runs one test of ``XCTestReportingProbe`` in a child process of this test binary.
    private func runProbe(_ name: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["FeedbackLoopTestingTests.XCTestReportingProbe/\(name)"]
        process.environment = ProcessInfo.processInfo.environment.merging([XCTestReportingProbe.switchName: "1"]) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }
}

/// The cases ``XCTestReportingTests`` runs in a child process. In a plain test run they return
/// at once: some of them must fail.
final class XCTestReportingProbe: XCTestCase {
    static let switchName = "FEEDBACKLOOP_XCTEST_PROBE"

    private var isProbing: Bool { ProcessInfo.processInfo.environment[Self.switchName] == "1" }

    func testWrongMutation() async {
        guard isProbing else { return }
        let loop = Ticker.testLoop(backend: .callback)
        await loop.send(.increment) { $0.count = 2 }  // the reducer makes 1
        await loop.finish()
    }

    func testRightMutation() async {
        guard isProbing else { return }
        let loop = Ticker.testLoop(backend: .actor)
        await loop.send(.increment) { $0.count = 1 }
        await loop.finish()
    }

    func testEffectStillRunning() async {
        guard isProbing else { return }
        let loop = Ticker.testLoop(clock: TestClock(), backend: .actor, labeled: true)
        await loop.send(.start) { $0.isTicking = true }
        await loop.finish(timeout: .milliseconds(50))
    }
}
