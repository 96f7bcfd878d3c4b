extension Loop {
    /// The configuration the loop was made with: its label, capacity, logger and instruments.
    /// A `LoopService` running the loop logs through the same logger and reports to the same
    /// metrics, so both are wired once, here.
    public var configuration: LoopConfiguration {
        engine.configuration
    }
}

extension Loop {
    /// Whether the loop carries its senders' `ServiceContext` to the effects their events cause
    /// (see ``ServiceContextPropagation``), as decided when it was made. Package-visible: a
    /// durable loop, whose events reach its inner loop from a task of its own, asks.
    @inlinable
    package var propagatesServiceContext: Bool {
        engine.cause != nil
    }
}
