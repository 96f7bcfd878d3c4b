// Bounded waits (`withDeadline`, `waitUntil`), `Gate`, `DispatchGate`, `withDrainHeld` and the
// blocking turn come from SharedTestSupport, which the engine's tests share: exported here once
// for the whole target rather than imported in every file.
@_exported import SharedTestSupport
