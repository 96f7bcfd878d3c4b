#if Tracing
import FeedbackLoop
import Tracing

// The spans of what FeedbackLoopServices refuses before any loop sees it. `LoopService` and
// `LoopRegistry` call these with the `LoopTracing` they were given; the span shapes stay here,
// beside the loop's own, so that an operator's query finds both.
extension LoopTracing {
    /// An event a service refused before it reached the loop labelled `label`, in the caller's
    /// context: the `reduce` span of any event that is not reduced, with `feedback_loop.dropped`
    /// set to `reason`.
    package func refused<Event>(_ event: Event, label: String, reason: String) {
        LoopSpans.dropped(event, reason: reason, label: label, tracer: tracer)
    }

    /// A call that got no loop, in the caller's context: a span named `operation`, ended at once,
    /// with `feedback_loop.refused` set to `reason`, and `error` (what the caller is thrown)
    /// recorded on it with an error status.
    package func refused(_ operation: String, reason: String, error: any Error) {
        let span = tracer.startSpan(operation, context: ServiceContext.current ?? .topLevel)
        span.attributes["feedback_loop.refused"] = reason
        span.recordError(error)
        span.setStatus(SpanStatus(code: .error, message: "\(error)"))
        span.end()
    }
}
#endif
