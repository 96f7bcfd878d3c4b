import Testing

extension ExitTest.Result {
    /// What the child process wrote to standard error: a trap's message, which must name the
    /// state machine, its state and the transition.
    var standardError: String { String(decoding: standardErrorContent, as: UTF8.self) }
}
