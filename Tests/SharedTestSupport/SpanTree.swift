import InMemoryTracing
import Testing

/// Reading and finding spans, for the tests that check whose child each span is and what it says
/// (tracing and services).
extension FinishedInMemorySpan {
    /// The string attribute at `key`, if there is one.
    public func string(_ key: String) -> String? {
        if case .string(let value) = attributes.get(key) { return value }
        return nil
    }

    /// `reduce place`, or `reduce place dropped: overCapacity`: what a test compares.
    public var summary: String {
        let event = string("feedback_loop.event").map { " \($0)" } ?? ""
        let dropped = string("feedback_loop.dropped").map { " dropped: \($0)" } ?? ""
        return operationName + event + dropped
    }
}

extension [FinishedInMemorySpan] {
    /// Each span's ``FinishedInMemorySpan/summary``, sorted.
    public var summaries: [String] { map(\.summary).sorted() }

    /// The spans whose parent is `parent`.
    public func children(of parent: FinishedInMemorySpan) -> [FinishedInMemorySpan] {
        filter { $0.parentSpanID == parent.spanID && $0.traceID == parent.traceID }
    }

    /// The one span whose parent is `parent` and whose name is `name`; a test failure otherwise.
    public func child(
        of parent: FinishedInMemorySpan, named name: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> FinishedInMemorySpan {
        let found = children(of: parent).filter { $0.operationName == name }
        try #require(
            found.count == 1, "expected one \(name) span under \(parent.operationName), found \(found.count)",
            sourceLocation: sourceLocation)
        return found[0]
    }

    public func named(_ name: String) -> [FinishedInMemorySpan] { filter { $0.operationName == name } }
}
