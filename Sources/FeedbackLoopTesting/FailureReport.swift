#if Testing
import CustomDump
import IssueReporting

// How the package's test kits word and report a failure, shared by `TestLoop` and the durable
// kit's `DurableTestLoop` so that both read alike.

/// Where a test loop's method was called: where its failures are reported.
package struct CallSite: Sendable {
    let fileID: StaticString
    let filePath: StaticString
    let line: UInt
    let column: UInt

    package init(fileID: StaticString, filePath: StaticString, line: UInt, column: UInt) {
        self.fileID = fileID
        self.filePath = filePath
        self.line = line
        self.column = column
    }

    /// Fails the running test — Swift Testing or XCTest — with `headline` as the message's
    /// first line and `detail` below it.
    package func fail(_ headline: String, _ detail: String) {
        reportIssue(
            headline + "\n\n" + detail, fileID: fileID, filePath: filePath, line: line, column: column)
    }
}

/// A value on one line, short enough for a failure message's first sentence.
package func describeOnOneLine(_ value: some Any) -> String {
    var text = ""
    customDump(value, to: &text, maxDepth: 3)
    let line = text.split(separator: "\n")
        .map { $0.trimmingPrefix(while: \.isWhitespace) }
        .joined(separator: " ")
        .replacing("( ", with: "(").replacing(" )", with: ")")
        .replacing("[ ", with: "[").replacing(" ]", with: "]")
        // customDump numbers array elements on their own lines; on one line they are noise.
        .replacing(#/\[\d+\]: /#, with: "")
    return line.count > 300 ? line.prefix(299) + "…" : line
}

/// The diff of two values for a failure message, indented, with its legend; empty when they
/// dump alike.
package func differenceForFailure<Value>(
    _ expected: Value, _ actual: Value, legend: String = "(Expected: −, Actual: +)"
) -> String {
    diff(expected, actual, format: .proportional).map { "\n\n" + $0.indenting(by: 2) + "\n\n" + legend } ?? ""
}

extension String {
    package func indenting(by count: Int) -> String {
        let indent = String(repeating: " ", count: count)
        return split(separator: "\n", omittingEmptySubsequences: false)
            .map { indent + $0 }
            .joined(separator: "\n")
    }
}
#endif
