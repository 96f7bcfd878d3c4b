import Testing

/// Runs `body`, which must record at least one issue, and requires every issue it records to
/// mention all of `fragments` (so a test fails if the test loop fails for the wrong reason).
func expectIssues(
    mentioning fragments: String...,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async -> Void
) async {
    await withKnownIssue(sourceLocation: sourceLocation) {
        await body()
    } matching: { issue in
        let text = issue.comments.map(\.rawValue).joined(separator: "\n")
        return fragments.allSatisfy { text.contains($0) }
    }
}
