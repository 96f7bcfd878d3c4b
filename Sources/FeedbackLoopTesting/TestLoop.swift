import CustomDump
import FeedbackLoop
import FeedbackLoopRecording
import Testing

/// A `Loop` under test: every event the test sends and every event an effect
/// sends must be asserted, with the exact change it makes to the state; the test fails on an
/// unexpected event, an unasserted change, or an effect still running at the end.
///
/// ```swift
/// @Test(arguments: Backend.allCases)
/// func countsDownToZero(backend: Backend) async {
///     let clock = TestClock()
///     let loop = TestLoop(
///         initial: Timer.State(remaining: 2),
///         reduce: Timer.reduce,
///         feedbacks: Timer.feedbacks(clock: clock),
///         backend: backend)
///
///     await loop.send(.start) { $0.isRunning = true }
///     await loop.advance(clock, by: .seconds(1))
///     await loop.receive(.tick) { $0.remaining = 1 }
///     await loop.advance(clock, by: .seconds(1))
///     await loop.receive(.tick) {
///         $0.remaining = 0
///         $0.isRunning = false
///     }
///     await loop.finish()
/// }
/// ```
///
/// ## How it checks
/// The loop runs for real, on the backend you choose, with your reducer and feedbacks; the test
/// loop watches it through `LoopInstrumentation` and keeps every transition in
/// order. ``send(_:assert:sourceLocation:)`` sends an event and checks its transition;
/// ``receive(_:timeout:assert:sourceLocation:)`` takes the next transition caused by an effect
/// and checks it; ``finish(timeout:sourceLocation:)`` checks that nothing is left over and stops
/// the loop. Each check can be relaxed with ``exhaustivity``.
///
/// Failures are recorded with Swift Testing's `Issue.record` at the line of the call that found
/// them, with a diff of the expected and the actual state; `withKnownIssue` catches them.
///
/// ## Time and effects
/// Nothing here waits with a sleep. Control time by giving your feedbacks a swift-clocks
/// `TestClock` and advancing it with ``advance(_:by:sourceLocation:)``, which waits until the
/// timer is asleep on the clock; control services with fakes. ``receive(_:timeout:assert:sourceLocation:)``
/// waits for an effect's event up to ``timeout`` (wall time, only spent when the event is late)
/// and fails loudly if it never comes.
///
/// ## Order
/// A test should leave nothing to chance: before sending an event, receive every event that
/// effects have already sent. An effect event reduced before an event the test sent is reported
/// as unasserted (with ``Exhaustivity/receivedEvents``), because the test did not control when
/// it came.
///
/// Use a test loop from one task at a time; its methods are `async` and must be awaited in
/// order.
public final class TestLoop<State: Sendable & Equatable, Event: Sendable & Equatable>: Sendable {
    private struct Progress {
        /// Index in the journal of the first transition not yet asserted or skipped.
        var cursor = 0
        /// The state as of the last transition asserted or skipped.
        var state: State
        var exhaustivity: Exhaustivity
        var timeout: Duration
        var isFinished = false
    }

    /// The loop under test. Read its `Loop.statistics` or observe it if a test
    /// needs to; send events through the test loop, not through it, so they are asserted.
    public let loop: Loop<State, Event>

    private let journal: Journal<State, Event>
    private let progress: Locked<Progress>

    /// Creates a loop on `backend` and starts it, as `Loop` would: feedbacks see
    /// `initial` at once, and effects they start send events the test must receive.
    ///
    /// - Parameters:
    ///   - initial: The first state.
    ///   - reduce: The reducer under test.
    ///   - feedbacks: The feedbacks under test; give them a `TestClock` and fake services.
    ///   - backend: The engine; test on both (`@Test(arguments: Backend.allCases)`).
    ///   - configuration: As for `Loop`.
    ///   - instrumentation: Hooks of your own (a logger, a `TransitionLog`),
    ///     called alongside the test loop's.
    ///   - exhaustivity: Which checks to make; all by default.
    ///   - timeout: How long (wall time) ``receive(_:timeout:assert:sourceLocation:)`` and
    ///     ``finish(timeout:sourceLocation:)`` wait before failing. Only spent when the test is
    ///     about to fail, so keep it generous for loaded CI machines.
    public init(
        initial: State,
        reduce: @escaping @Sendable (inout State, Event) -> Void,
        feedbacks: [Feedback<State, Event>] = [],
        backend: Backend = .callback,
        configuration: LoopConfiguration = LoopConfiguration(label: "TestLoop"),
        instrumentation: LoopInstrumentation<State, Event>? = nil,
        exhaustivity: Exhaustivity = .on,
        timeout: Duration = .seconds(30)
    ) {
        let journal = Journal<State, Event>()
        self.journal = journal
        self.progress = Locked(Progress(state: initial, exhaustivity: exhaustivity, timeout: timeout))
        self.loop = Loop(
            initial: initial,
            reduce: reduce,
            feedbacks: feedbacks,
            backend: backend,
            configuration: configuration,
            instrumentation: .combining([journal.instrumentation] + (instrumentation.map { [$0] } ?? [])))
    }

    /// The state as of the last event the test asserted (or skipped): what the next assertion
    /// starts from.
    public var state: State {
        progress.withLock { $0.state }
    }

    /// Which checks the test loop makes. Change it at any point of a test; it applies from the
    /// next call on.
    public var exhaustivity: Exhaustivity {
        get { progress.withLock { $0.exhaustivity } }
        set { progress.withLock { $0.exhaustivity = newValue } }
    }

    /// The default wait of ``receive(_:timeout:assert:sourceLocation:)`` and
    /// ``finish(timeout:sourceLocation:)``.
    public var timeout: Duration {
        get { progress.withLock { $0.timeout } }
        set { progress.withLock { $0.timeout = newValue } }
    }

    /// Every transition the loop has made so far, asserted or not, in order — for instance to
    /// draw a `StateDiagram` of the scenario the test ran:
    /// `StateDiagram(loop.transitions).mermaid`.
    public var transitions: [Transition<State, Event>] {
        journal.read { $0.transitions }
    }

    // MARK: Sending

    /// Sends `event` into the loop, waits until it is reduced, and checks the change it made.
    ///
    /// With ``Exhaustivity/state`` (the default) `assert` must turn the state before the event
    /// into exactly the state after it; leave it out when the event changes nothing. Without,
    /// it must only agree with the state after the event on what it sets.
    ///
    /// Fails if the loop has effect events the test has not received yet (they are skipped),
    /// if an effect threw, or if the loop has stopped.
    nonisolated(nonsending) public func send(
        _ event: Event,
        assert expectation: ((inout State) throws -> Void)? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let (exhaustivity, finished) = progress.withLock { ($0.exhaustivity, $0.isFinished) }
        guard !finished else {
            Issue.record("Sent \(describe(event)) after the test loop finished.", sourceLocation: sourceLocation)
            return
        }
        reportEffectFailures(exhaustivity, sourceLocation)
        skipPending(before: "sending \(describe(event))", exhaustivity, sourceLocation)

        let after: State
        do {
            after = try await loop.sendAndWait(event)
        } catch {
            Issue.record("Could not send \(describe(event)): \(error).", sourceLocation: sourceLocation)
            return
        }
        // The hook saw the transition before the reply was resumed, so it is in the journal: the
        // first unasserted one with this event and this result is ours. (Matching on the event
        // alone is the fallback for a state whose `==` is not reflexive, such as one holding NaN.)
        let found = journal.read { contents -> (Int, [Transition<State, Event>])? in
            let start = progress.withLock { $0.cursor }
            let pending = contents.transitions[start...]
            guard let index = pending.firstIndex(where: { $0.event == event && $0.after == after })
                ?? pending.firstIndex(where: { $0.event == event })
            else { return nil }
            return (index, Array(contents.transitions[start..<index]))
        }
        guard let (index, earlier) = found else {
            Issue.record(
                "Sent \(describe(event)), but the loop reported no transition for it.",
                sourceLocation: sourceLocation)
            return
        }
        if !earlier.isEmpty, exhaustivity.contains(.receivedEvents) {
            Issue.record(
                """
                Effects sent \(earlier.count) event(s) that were reduced before \(describe(event)) and \
                not received: \(earlier.map { describe($0.event) }.joined(separator: ", ")).

                Receive them before sending, and make sure the test controls when effects send \
                (a TestClock, a fake service).
                """,
                sourceLocation: sourceLocation)
        }
        let transition = journal.read { $0.transitions[index] }
        progress.withLock {
            $0.cursor = index + 1
            $0.state = transition.after
        }
        check(transition, against: expectation, action: "sending \(describe(event))", exhaustivity, sourceLocation)
    }

    // MARK: Receiving

    /// Takes the next event an effect sent, waiting up to `timeout` for it, checks that it is
    /// `event`, and checks the change it made like ``send(_:assert:sourceLocation:)`` does.
    ///
    /// Without ``Exhaustivity/receivedEvents``, events before the first `event` are skipped.
    ///
    /// - Parameter timeout: How long to wait (wall time); ``timeout`` by default.
    nonisolated(nonsending) public func receive(
        _ event: Event,
        timeout: Duration? = nil,
        assert expectation: ((inout State) throws -> Void)? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        await receive(
            describedAs: describe(event), matching: { $0 == event }, timeout: timeout,
            assert: expectation, sourceLocation: sourceLocation)
    }

    /// Takes the next event an effect sent, waiting up to `timeout` for it, checks that
    /// `isExpected` accepts it, and checks the change it made. For events whose payload a test
    /// cannot spell out exactly (an error, a generated identifier).
    nonisolated(nonsending) public func receive(
        where isExpected: (Event) -> Bool,
        timeout: Duration? = nil,
        assert expectation: ((inout State) throws -> Void)? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        await receive(
            describedAs: "an event matching the predicate", matching: isExpected, timeout: timeout,
            assert: expectation, sourceLocation: sourceLocation)
    }

    nonisolated(nonsending) private func receive(
        describedAs expected: String,
        matching isExpected: (Event) -> Bool,
        timeout: Duration?,
        assert expectation: ((inout State) throws -> Void)?,
        sourceLocation: SourceLocation
    ) async {
        let (exhaustivity, defaultTimeout, finished, cursor) = progress.withLock {
            ($0.exhaustivity, $0.timeout, $0.isFinished, $0.cursor)
        }
        guard !finished else {
            Issue.record("Expected to receive \(expected) after the test loop finished.", sourceLocation: sourceLocation)
            return
        }
        let wait = timeout ?? defaultTimeout
        let deadline = ContinuousClock.now.advanced(by: wait)
        let strict = exhaustivity.contains(.receivedEvents)
        let index = await journal.wait(until: deadline) { contents -> Int? in
            let pending = contents.transitions[cursor...]
            return strict ? pending.indices.first : pending.firstIndex { isExpected($0.event) }
        }
        reportEffectFailures(exhaustivity, sourceLocation)
        guard let index else {
            let running = journal.read { $0.running.values.sorted { $0.effect < $1.effect } }
            Issue.record(
                """
                Expected to receive \(expected), but no \(strict ? "" : "such ")event arrived within \(wait). \
                \(running.isEmpty ? "No effect is running." : "Running: \(running.map(\.description).joined(separator: "; ")).")

                If an effect waits on a TestClock, advance the clock first.
                """,
                sourceLocation: sourceLocation)
            return
        }
        let transition = journal.read { $0.transitions[index] }
        progress.withLock {
            $0.cursor = index + 1
            $0.state = transition.after
        }
        guard isExpected(transition.event) else {
            Issue.record(
                "Expected to receive \(expected), received \(describe(transition.event)).",
                sourceLocation: sourceLocation)
            return
        }
        check(transition, against: expectation, action: "receiving \(describe(transition.event))", exhaustivity, sourceLocation)
    }

    /// Marks every event effects have sent so far as received without asserting it, for a test
    /// that does not care about them. The state moves on to the state after the last of them.
    public func skipReceivedEvents() {
        journal.read { contents in
            progress.withLock {
                if let last = contents.transitions.last, $0.cursor < contents.transitions.count {
                    $0.state = last.after
                }
                $0.cursor = max($0.cursor, contents.transitions.count)
            }
        }
    }

    // MARK: Finishing

    /// Ends the test: waits up to `timeout` for running effects to end and the loop to become
    /// idle, fails if an effect is still running or an effect event was not received, then
    /// stops the loop (cancelling whatever still runs). Call it last in every test.
    ///
    /// Without ``Exhaustivity/effects`` it does not wait for effects: it stops the loop right
    /// away, and events effects had sent but the loop had not reduced yet are discarded.
    nonisolated(nonsending) public func finish(
        timeout: Duration? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let (exhaustivity, defaultTimeout, wasFinished) = progress.withLock { progress in
            defer { progress.isFinished = true }
            return (progress.exhaustivity, progress.timeout, progress.isFinished)
        }
        guard !wasFinished else { return }
        let wait = timeout ?? defaultTimeout
        let deadline = ContinuousClock.now.advanced(by: wait)

        if exhaustivity.contains(.effects) {
            // Idle means no effect running and no event queued: every event effects sent is in
            // the journal by then.
            if await !bounded(until: deadline, { [loop] in await loop.waitUntilIdle() }) {
                let running = journal.read { $0.running.values.sorted { $0.effect < $1.effect } }
                let detail = running.isEmpty
                    ? "no effect is running, but a cancelled effect has not returned or events are still queued"
                    : "\(running.count) effect(s) still running: \(running.map(\.description).joined(separator: "; "))"
                Issue.record(
                    """
                    The loop did not become idle by the end of the test (waited \(wait)): \(detail).

                    End effects through the events that cancel them, advance the TestClock they wait on, \
                    or relax the check with `exhaustivity.remove(.effects)`.
                    """,
                    sourceLocation: sourceLocation)
            }
            reportEffectFailures(exhaustivity, sourceLocation)
        }
        let unreceived = journal.read { contents in
            Array(contents.transitions[progress.withLock { $0.cursor }...])
        }
        if !unreceived.isEmpty, exhaustivity.contains(.receivedEvents) {
            Issue.record(
                """
                The test ended with \(unreceived.count) event(s) from effects not received: \
                \(unreceived.map { describe($0.event) }.joined(separator: ", ")).
                """,
                sourceLocation: sourceLocation)
        }
        skipReceivedEvents()
        let stopDeadline = ContinuousClock.now.advanced(by: wait)
        if await !bounded(until: stopDeadline, { [loop] in await loop.stop() }) {
            Issue.record(
                "The loop did not stop within \(wait): an effect does not respond to cancellation.",
                sourceLocation: sourceLocation)
        }
    }

    // MARK: Checks

    private func check(
        _ transition: Transition<State, Event>,
        against expectation: ((inout State) throws -> Void)?,
        action: String,
        _ exhaustivity: Exhaustivity,
        _ sourceLocation: SourceLocation
    ) {
        var expected = exhaustivity.contains(.state) ? transition.before : transition.after
        do {
            try expectation?(&expected)
        } catch {
            Issue.record(error, "The assertion closure threw while \(action).", sourceLocation: sourceLocation)
            return
        }
        if expected != transition.after {
            let difference = diff(expected, transition.after, format: .proportional)
                .map { "\n\n" + $0.indenting(by: 2) + "\n\n(Expected: −, Actual: +)" } ?? ""
            let what = expectation == nil
                ? "The state changed while \(action), but no change was asserted:"
                : "The state after \(action) does not match the expectation:"
            Issue.record(Comment(rawValue: what + difference), sourceLocation: sourceLocation)
        } else if expectation != nil, exhaustivity.contains(.state), transition.before == transition.after {
            Issue.record(
                "The state did not change while \(action), and the assertion closure did not change it either: leave the closure out when no change is expected.",
                sourceLocation: sourceLocation)
        }
    }

    /// Events effects sent before the test's next action and not received: skipped, and
    /// reported when every received event must be asserted.
    private func skipPending(before action: String, _ exhaustivity: Exhaustivity, _ sourceLocation: SourceLocation) {
        let pending = journal.read { contents in
            Array(contents.transitions[progress.withLock { $0.cursor }...])
        }
        guard !pending.isEmpty else { return }
        if exhaustivity.contains(.receivedEvents) {
            Issue.record(
                """
                \(pending.count) event(s) from effects must be received before \(action): \
                \(pending.map { describe($0.event) }.joined(separator: ", ")).
                """,
                sourceLocation: sourceLocation)
        }
        skipReceivedEvents()
    }

    private func reportEffectFailures(_ exhaustivity: Exhaustivity, _ sourceLocation: SourceLocation) {
        let failures = journal.read { contents in
            defer { contents.failures.removeAll() }
            return contents.failures
        }
        guard exhaustivity.contains(.effects) else { return }
        for failure in failures {
            Issue.record("An effect threw: \(failure).", sourceLocation: sourceLocation)
        }
    }

    /// Runs `operation` in its own task and waits for it until `deadline`; `false` if it had
    /// not returned by then (it keeps running).
    nonisolated(nonsending) private func bounded(
        until deadline: ContinuousClock.Instant,
        _ operation: @escaping @Sendable () async -> Void
    ) async -> Bool {
        let token = journal.makeToken()
        Task { [journal] in
            await operation()
            journal.complete(token)
        }
        return await journal.wait(until: deadline) { $0.completed.remove(token) != nil ? true : nil } ?? false
    }

    /// An event on one line, short enough for a failure message's first sentence.
    private func describe(_ event: Event) -> String {
        var text = ""
        customDump(event, to: &text, maxDepth: 3)
        let line = text.split(separator: "\n")
            .map { $0.trimmingPrefix(while: \.isWhitespace) }
            .joined(separator: " ")
            .replacing("( ", with: "(").replacing(" )", with: ")")
            .replacing("[ ", with: "[").replacing(" ]", with: "]")
        return line.count > 300 ? line.prefix(299) + "…" : line
    }
}

extension String {
    fileprivate func indenting(by count: Int) -> String {
        let indent = String(repeating: " ", count: count)
        return split(separator: "\n", omittingEmptySubsequences: false)
            .map { indent + $0 }
            .joined(separator: "\n")
    }
}
