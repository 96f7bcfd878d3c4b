#if Durable
// `import FeedbackLoopDurable` gives the core too, as the other products do: a durable loop's
// feedbacks are the core's `Feedback` and `Effect`.
@_exported import FeedbackLoop
#endif
