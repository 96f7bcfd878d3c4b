import Testing

/// Runs `body`, which must record at least one issue, and requires every issue it records to
/// mention all of `fragments` (so a test fails if the test loop fails for the wrong reason) and,
/// when `headline` is given, to start with it on its first line.
func expectIssues(
    headline: String? = nil,
    mentioning fragments: String...,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async -> Void
) async {
    await withKnownIssue(sourceLocation: sourceLocation) {
        await body()
    } matching: { issue in
        let text = issue.comments.map(\.rawValue).joined(separator: "\n")
        let firstLine = text.split(separator: "\n", omittingEmptySubsequences: false).first ?? ""
        return (headline.map { firstLine.hasPrefix($0) } ?? true) && fragments.allSatisfy { text.contains($0) }
    }
}
