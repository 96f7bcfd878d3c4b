extension Loop {
    /// The configuration the loop was made with: its label, capacity, logger and instruments.
    /// A `LoopService` running the loop logs through the same logger and reports to the same
    /// metrics, so both are wired once, here.
    public var configuration: LoopConfiguration {
        engine.configuration
    }
}
