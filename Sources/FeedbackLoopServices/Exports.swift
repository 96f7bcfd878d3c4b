#if Services
// What running a loop as a service needs, from one import: `import FeedbackLoopServices` gives
// `LoopService` and `LoopMetrics`, the core (`Loop`, `LoopConfiguration`), swift-service-lifecycle's
// `ServiceGroup` and `Service` with the `UnixSignal` a group is given, and swift-log's `Logger`
// that both take.
@_exported import FeedbackLoop
@_exported import Logging
@_exported import ServiceLifecycle
@_exported import struct UnixSignals.UnixSignal
// Only the protocol `LoopMetrics.init` takes: all of swift-metrics would bring its `Timer`, which
// clashes with Foundation's in every file that imports both.
@_exported import protocol CoreMetrics.MetricsFactory
#endif
