#if Testing
// What a test of a feature needs, from one import: `import FeedbackLoopTesting` gives `TestLoop`,
// the core (`Loop`, `Feedback`, `Backend`), the `TestClock` that `advance(_:by:)` takes, and the
// `Transition` that `transitions` returns.
@_exported import Clocks
@_exported import FeedbackLoop
@_exported import FeedbackLoopRecording
#endif
