// `import FeedbackLoopRecording` gives the core too: every type here takes a `Loop`'s
// instrumentation, states and events.
@_exported import FeedbackLoop
