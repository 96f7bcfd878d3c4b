/// Where a loop on ``Backend/stream`` keeps its task tree: the task that owns the state and whose
/// children are the loop's `.run` effects. The other backends have no tree of their own (their
/// effects are unstructured tasks) and ignore this setting.
public enum LoopHosting: Sendable, Hashable {
    /// The loop starts a task of its own when it is made, and the tree lives there. Like any
    /// unstructured `Task`, that task inherits the task-local values and priority of the code
    /// that made the loop, and no caller's cancellation reaches it: ``Loop/stop()`` ends it.
    case ownTask

    /// The tree waits for a caller of ``Loop/run()`` and lives in that caller's task: task-local
    /// values bound around `run()` (a tracing `ServiceContext`, a logger's metadata) reach every
    /// effect, the caller's priority propagates to them, and cancelling the caller stops the loop
    /// and cancels every effect before `run()` returns. Use it to run a loop as a
    /// swift-service-lifecycle `Service` or inside a task group.
    ///
    /// Events sent before `run()` is called wait in the queue, and the feedbacks see the initial
    /// state only then. A loop stopped before anyone ran it is torn down by ``Loop/stop()``'s
    /// caller (or by a task of its own after `deinit`). Only the first caller of `run()` hosts;
    /// later ones wait for the stop, as on the other backends.
    case run
}
