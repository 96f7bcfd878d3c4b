import FeedbackLoop

/// What a scenario run must satisfy before its figures are believed: the final state equals what
/// was sent, every event was reduced and none dropped, the effect counters add up
/// (`started == running + finished + cancelled + failed`), and no effect leaked (every effect body
/// that started had its cancellation handler run by the time the loop stopped).
public struct RunCheck: Sendable, Hashable {
    /// Which run, for the error message.
    public var run: String
    public var expectedState: Int
    public var finalState: Int
    /// Events the reducer must have run on, when known.
    public var expectedReduced: Int?
    public var statistics: LoopStatistics
    /// Effects that must still be running (0 once the loop has stopped).
    public var expectedRunning: Int
    public var expectedStarted: Int?
    public var expectedCancelled: Int?
    /// Effect bodies that began and cancellation handlers that ran, as counted by the effects
    /// themselves (an ``EffectCensus``); checked only once nothing should be running.
    public var census: EffectCensus.Counts?

    public init(
        run: String,
        expectedState: Int,
        finalState: Int,
        expectedReduced: Int? = nil,
        statistics: LoopStatistics,
        expectedRunning: Int = 0,
        expectedStarted: Int? = nil,
        expectedCancelled: Int? = nil,
        census: EffectCensus.Counts? = nil
    ) {
        self.run = run
        self.expectedState = expectedState
        self.finalState = finalState
        self.expectedReduced = expectedReduced
        self.statistics = statistics
        self.expectedRunning = expectedRunning
        self.expectedStarted = expectedStarted
        self.expectedCancelled = expectedCancelled
        self.census = census
    }

    /// Effects whose body began but whose cancellation handler never ran.
    public var leaked: Int {
        guard let census else { return 0 }
        return census.started - census.cancelled - expectedRunning
    }

    /// Throws the first broken expectation.
    public func validate() throws(ScenarioFailure) {
        func fail(_ what: String) -> ScenarioFailure { ScenarioFailure("\(run): \(what)") }
        let stats = statistics
        guard finalState == expectedState else {
            throw fail("final state \(finalState), expected \(expectedState)")
        }
        if let expectedReduced, stats.eventsReduced != expectedReduced {
            throw fail("\(stats.eventsReduced) events reduced, expected \(expectedReduced)")
        }
        let dropped = stats.eventsDroppedAfterStop + stats.eventsDroppedOverCapacity
            + stats.eventsDroppedFromCancelledEffects + stats.eventsDiscardedAtStop + stats.eventsCancelledWhileWaiting
        guard dropped == 0 else { throw fail("\(dropped) events dropped (\(stats))") }
        let accounted = stats.effectsRunning + stats.effectsFinished + stats.effectsCancelled + stats.effectsFailed
        guard stats.effectsStarted == accounted else {
            throw fail("effects started \(stats.effectsStarted) != running + finished + cancelled + failed \(accounted)")
        }
        guard stats.effectsFailed == 0 else { throw fail("\(stats.effectsFailed) effects failed") }
        guard stats.effectsRunning == expectedRunning else {
            throw fail("\(stats.effectsRunning) effects running, expected \(expectedRunning)")
        }
        if let expectedStarted, stats.effectsStarted != expectedStarted {
            throw fail("\(stats.effectsStarted) effects started, expected \(expectedStarted)")
        }
        if let expectedCancelled, stats.effectsCancelled != expectedCancelled {
            throw fail("\(stats.effectsCancelled) effects cancelled, expected \(expectedCancelled)")
        }
        if let census {
            guard leaked == 0 else {
                throw fail("\(leaked) effects leaked (\(census.started) bodies began, \(census.cancelled) were cancelled)")
            }
            if expectedRunning == 0, census.started != stats.effectsStarted {
                throw fail("\(census.started) effect bodies ran for \(stats.effectsStarted) effects started")
            }
        }
    }
}
