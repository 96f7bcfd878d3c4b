#if Testing
import CustomDump
import FeedbackLoop
import FeedbackLoopRecording
import IssueReporting

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
/// order. ``send(_:assert:fileID:filePath:line:column:)`` sends an event and checks its
/// transition; ``receive(_:timeout:assert:fileID:filePath:line:column:)`` takes the next
/// transition caused by an effect and checks it; ``finish(timeout:fileID:filePath:line:column:)``
/// checks that nothing is left over and stops the loop. Each check can be relaxed with
/// ``exhaustivity``.
///
/// ## Failures
/// Failures are reported through pointfreeco's IssueReporting, so they fail the test under
/// Swift Testing (an `Issue`, which `withKnownIssue` catches) and under XCTest (an `XCTFail`)
/// alike, at the line of the call that found them. The first line of each message names what
/// failed — *State mismatch*, *Unasserted state change*, *Unexpected event*, *Event not
/// received*, *Unreceived events*, *Effect still running*, *Effect failed* — and the rest says
/// what the test loop saw, with a diff of the expected and the actual state where one applies.
/// Effects are named by their feedback's `label` (see `Feedback.labeled(_:)`).
///
/// ## Time and effects
/// Nothing here waits with a sleep. Control time by giving your feedbacks a swift-clocks
/// `TestClock` and advancing it with ``advance(_:by:fileID:filePath:line:column:)``, which waits
/// until the timer is asleep on the clock; control services with fakes. `receive` waits for an
/// effect's event up to ``timeout`` (wall time, only spent when the event is late) and fails
/// loudly, saying how long it waited and for what, if it never comes.
///
/// ## Order
/// A test should leave nothing to chance: before sending an event, receive every event that
/// effects have already sent. An effect event reduced before an event the test sent is reported
/// as unasserted (with ``Exhaustivity/receivedEvents``), because the test did not control when
/// it came. Events from effects that run side by side arrive in an order nobody controls:
/// receive them with ``receive(inAnyOrder:timeout:assert:fileID:filePath:line:column:)``.
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

    /// How long `receive` and `finish` wait by default: long enough for an effect that a test
    /// has already set free (a clock advanced, a fake answered) to send its event on a loaded CI
    /// machine, short enough that a forgotten `advance` fails in seconds rather than minutes.
    public static var defaultTimeout: Duration { .seconds(2) }

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
    ///   - timeout: How long (wall time) `receive` and `finish` wait before failing;
    ///     ``defaultTimeout`` (2 seconds) unless given. Only spent when the test is about to
    ///     fail.
    public init(
        initial: State,
        reduce: @escaping @Sendable (inout State, Event) -> Void,
        feedbacks: [Feedback<State, Event>] = [],
        backend: Backend = .callback,
        configuration: LoopConfiguration = LoopConfiguration(label: "TestLoop"),
        instrumentation: LoopInstrumentation<State, Event>? = nil,
        exhaustivity: Exhaustivity = .on,
        timeout: Duration = TestLoop.defaultTimeout
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

    /// The default wait of `receive` and `finish`, as given to the initializer.
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
    ///
    /// - Parameters:
    ///   - event: The event to send.
    ///   - expectation: Changes the state before the event into the state expected after it.
    ///   - fileID: Where a failure is reported; leave the default.
    ///   - filePath: Where a failure is reported; leave the default.
    ///   - line: Where a failure is reported; leave the default.
    ///   - column: Where a failure is reported; leave the default.
    nonisolated(nonsending) public func send(
        _ event: Event,
        assert expectation: ((inout State) throws -> Void)? = nil,
        fileID: StaticString = #fileID,
        filePath: StaticString = #filePath,
        line: UInt = #line,
        column: UInt = #column
    ) async {
        let at = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        let (exhaustivity, finished) = progress.withLock { ($0.exhaustivity, $0.isFinished) }
        guard !finished else {
            at.fail("Test loop finished", "Sent \(describe(event)) after the test loop finished.")
            return
        }
        reportEffectFailures(exhaustivity, at)
        skipPending(before: "sending \(describe(event))", exhaustivity, at)

        let after: State
        do {
            after = try await loop.sendAndWait(event)
        } catch {
            at.fail("Could not send \(describe(event))", "Could not send \(describe(event)): \(error).")
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
            at.fail(
                "No transition for \(describe(event))",
                "Sent \(describe(event)), but the loop reported no transition for it.")
            return
        }
        if !earlier.isEmpty, exhaustivity.contains(.receivedEvents) {
            at.fail(
                "Unreceived events: \(earlier.count) reduced before \(describe(event))",
                """
                Effects sent \(earlier.count) event(s) that were reduced before \(describe(event)) and \
                not received: \(earlier.map { describe($0.event) }.joined(separator: ", ")).

                Receive them before sending, and make sure the test controls when effects send \
                (a TestClock, a fake service).
                """)
        }
        let transition = journal.read { $0.transitions[index] }
        progress.withLock {
            $0.cursor = index + 1
            $0.state = transition.after
        }
        check(
            from: transition.before, to: transition.after, against: expectation,
            action: "sending \(describe(event))", exhaustivity, at)
    }

    // MARK: Receiving

    /// Takes the next event an effect sent, waiting up to `timeout` for it, checks that it is
    /// `event`, and checks the change it made like ``send(_:assert:fileID:filePath:line:column:)``
    /// does.
    ///
    /// Without ``Exhaustivity/receivedEvents``, events before the first `event` are skipped.
    ///
    /// - Parameters:
    ///   - event: The event expected next.
    ///   - timeout: How long to wait (wall time); ``timeout`` by default.
    ///   - expectation: Changes the state before the event into the state expected after it.
    ///   - fileID: Where a failure is reported; leave the default.
    ///   - filePath: Where a failure is reported; leave the default.
    ///   - line: Where a failure is reported; leave the default.
    ///   - column: Where a failure is reported; leave the default.
    nonisolated(nonsending) public func receive(
        _ event: Event,
        timeout: Duration? = nil,
        assert expectation: ((inout State) throws -> Void)? = nil,
        fileID: StaticString = #fileID,
        filePath: StaticString = #filePath,
        line: UInt = #line,
        column: UInt = #column
    ) async {
        await receive(
            describedAs: describe(event), matching: { $0 == event }, timeout: timeout,
            assert: expectation, at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    /// Takes the next event an effect sent, waiting up to `timeout` for it, checks that
    /// `isExpected` accepts it, and checks the change it made. For events whose payload a test
    /// cannot spell out exactly (an error, a generated identifier).
    ///
    /// - Parameters:
    ///   - isExpected: Accepts the event expected next.
    ///   - timeout: How long to wait (wall time); ``timeout`` by default.
    ///   - expectation: Changes the state before the event into the state expected after it.
    ///   - fileID: Where a failure is reported; leave the default.
    ///   - filePath: Where a failure is reported; leave the default.
    ///   - line: Where a failure is reported; leave the default.
    ///   - column: Where a failure is reported; leave the default.
    nonisolated(nonsending) public func receive(
        where isExpected: (Event) -> Bool,
        timeout: Duration? = nil,
        assert expectation: ((inout State) throws -> Void)? = nil,
        fileID: StaticString = #fileID,
        filePath: StaticString = #filePath,
        line: UInt = #line,
        column: UInt = #column
    ) async {
        await receive(
            describedAs: "an event matching the predicate", matching: isExpected, timeout: timeout,
            assert: expectation, at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    /// Takes the next `events.count` events effects sent, in whatever order they arrived,
    /// checks that they are `events` (as a multiset: each listed event once per listing), and
    /// checks the change they made together.
    ///
    /// For effects that run side by side — two downloads, a request and a timer — whose events
    /// race: the test cannot know which arrives first, only which arrive. `expectation` turns
    /// the state before the first of them into the state after the last of them; so it asserts
    /// their combined change, which is the same whatever the order when the reducer's changes
    /// for them commute.
    ///
    /// ```swift
    /// await loop.send(.download([1, 2])) { $0.downloading = [1, 2] }
    /// await loop.receive(inAnyOrder: [.downloaded(1), .downloaded(2)]) {
    ///     $0.downloading = []
    ///     $0.done = [1, 2]
    /// }
    /// ```
    ///
    /// With ``Exhaustivity/receivedEvents`` the next events must be exactly these; without, other
    /// events among them are skipped.
    ///
    /// - Parameters:
    ///   - events: The events expected next, in any order.
    ///   - timeout: How long to wait for all of them (wall time); ``timeout`` by default.
    ///   - expectation: Changes the state before the first of them into the state expected
    ///     after the last of them.
    ///   - fileID: Where a failure is reported; leave the default.
    ///   - filePath: Where a failure is reported; leave the default.
    ///   - line: Where a failure is reported; leave the default.
    ///   - column: Where a failure is reported; leave the default.
    nonisolated(nonsending) public func receive(
        inAnyOrder events: [Event],
        timeout: Duration? = nil,
        assert expectation: ((inout State) throws -> Void)? = nil,
        fileID: StaticString = #fileID,
        filePath: StaticString = #filePath,
        line: UInt = #line,
        column: UInt = #column
    ) async {
        let at = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        let expected = events.map(describe).joined(separator: ", ")
        guard !events.isEmpty else {
            at.fail("Nothing to receive", "`receive(inAnyOrder:)` was given no events.")
            return
        }
        guard let (exhaustivity, wait, deadline, cursor) = startReceiving(expected, timeout: timeout, at: at) else { return }
        let strict = exhaustivity.contains(.receivedEvents)

        let outcome = await journal.wait(until: deadline) { contents -> UnorderedMatch? in
            var missing = events
            var matched: [Int] = []
            for index in contents.transitions.indices where index >= cursor {
                if let position = missing.firstIndex(of: contents.transitions[index].event) {
                    missing.remove(at: position)
                    matched.append(index)
                    if missing.isEmpty { return .matched(matched) }
                } else if strict {
                    return .unexpected(index)
                }
            }
            return nil
        }
        reportEffectFailures(exhaustivity, at)
        switch outcome {
        case nil:
            let arrived = journal.read { Array($0.transitions[cursor...]) }
            at.fail(
                "Event not received: waited \(wait) for \(events.count) event(s) in any order",
                """
                Expected to receive \(expected) in any order, but \
                \(arrived.isEmpty ? "no event arrived" : "only \(arrived.map { describe($0.event) }.joined(separator: ", ")) arrived") \
                within \(wait). \(runningEffects())

                If an effect waits on a TestClock, advance the clock first.
                """)
        case .unexpected(let index):
            let transition = journal.read { $0.transitions[index] }
            progress.withLock {
                $0.cursor = index + 1
                $0.state = transition.after
            }
            at.fail(
                "Unexpected event: \(describe(transition.event))",
                "Expected to receive \(expected) in any order, received \(describe(transition.event)).")
        case .matched(let indices):
            let (first, last) = journal.read { ($0.transitions[indices[0]], $0.transitions[indices[indices.count - 1]]) }
            progress.withLock {
                $0.cursor = indices[indices.count - 1] + 1
                $0.state = last.after
            }
            check(
                from: first.before, to: last.after, against: expectation,
                action: "receiving \(expected)", exhaustivity, at)
        }
    }

    /// What every `receive` starts with: the settings it runs under, or `nil` (and a failure) when
    /// the test loop has already finished.
    private func startReceiving(
        _ expected: String, timeout: Duration?, at: CallSite
    ) -> (exhaustivity: Exhaustivity, wait: Duration, deadline: ContinuousClock.Instant, cursor: Int)? {
        let (exhaustivity, defaultTimeout, finished, cursor) = progress.withLock {
            ($0.exhaustivity, $0.timeout, $0.isFinished, $0.cursor)
        }
        guard !finished else {
            at.fail("Test loop finished", "Expected to receive \(expected) after the test loop finished.")
            return nil
        }
        let wait = timeout ?? defaultTimeout
        return (exhaustivity, wait, ContinuousClock.now.advanced(by: wait), cursor)
    }

    nonisolated(nonsending) private func receive(
        describedAs expected: String,
        matching isExpected: (Event) -> Bool,
        timeout: Duration?,
        assert expectation: ((inout State) throws -> Void)?,
        at: CallSite
    ) async {
        guard let (exhaustivity, wait, deadline, cursor) = startReceiving(expected, timeout: timeout, at: at) else { return }
        let strict = exhaustivity.contains(.receivedEvents)
        let index = await journal.wait(until: deadline) { contents -> Int? in
            let pending = contents.transitions[cursor...]
            return strict ? pending.indices.first : pending.firstIndex { isExpected($0.event) }
        }
        reportEffectFailures(exhaustivity, at)
        guard let index else {
            at.fail(
                "Event not received: waited \(wait) for \(expected)",
                """
                Expected to receive \(expected), but no \(strict ? "" : "such ")event arrived within \(wait). \
                \(runningEffects())

                If an effect waits on a TestClock, advance the clock first.
                """)
            return
        }
        let transition = journal.read { $0.transitions[index] }
        progress.withLock {
            $0.cursor = index + 1
            $0.state = transition.after
        }
        guard isExpected(transition.event) else {
            at.fail(
                "Unexpected event: \(describe(transition.event))",
                "Expected to receive \(expected), received \(describe(transition.event)).")
            return
        }
        check(
            from: transition.before, to: transition.after, against: expectation,
            action: "receiving \(describe(transition.event))", exhaustivity, at)
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
    /// stops the loop (cancelling whatever still runs), failing if an effect ignores that
    /// cancellation for `timeout` (5 seconds at least). Call it last in every test.
    ///
    /// Without ``Exhaustivity/effects`` it does not wait for effects: it stops the loop right
    /// away, and events effects had sent but the loop had not reduced yet are discarded.
    ///
    /// - Parameters:
    ///   - timeout: How long to wait for the loop to become idle (wall time); ``timeout`` by
    ///     default.
    ///   - fileID: Where a failure is reported; leave the default.
    ///   - filePath: Where a failure is reported; leave the default.
    ///   - line: Where a failure is reported; leave the default.
    ///   - column: Where a failure is reported; leave the default.
    nonisolated(nonsending) public func finish(
        timeout: Duration? = nil,
        fileID: StaticString = #fileID,
        filePath: StaticString = #filePath,
        line: UInt = #line,
        column: UInt = #column
    ) async {
        let at = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
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
                let headline = running.isEmpty
                    ? "Loop not idle at the end of the test"
                    : "Effect still running at the end of the test: \(running.map(describe(effect:)).joined(separator: ", "))"
                let detail = running.isEmpty
                    ? "no effect is running, but a cancelled effect has not returned or events are still queued"
                    : "\(running.count) effect(s) still running: \(running.map(describe(effect:)).joined(separator: "; "))"
                at.fail(
                    headline,
                    """
                    The loop did not become idle by the end of the test (waited \(wait)): \(detail).

                    End effects through the events that cancel them, advance the TestClock they wait on, \
                    or relax the check with `exhaustivity.remove(.effects)`.
                    """)
            }
            reportEffectFailures(exhaustivity, at)
        }
        let unreceived = journal.read { contents in
            Array(contents.transitions[progress.withLock { $0.cursor }...])
        }
        if !unreceived.isEmpty, exhaustivity.contains(.receivedEvents) {
            at.fail(
                "Unreceived events: \(unreceived.count) at the end of the test",
                """
                The test ended with \(unreceived.count) event(s) from effects not received: \
                \(unreceived.map { describe($0.event) }.joined(separator: ", ")).
                """)
        }
        skipReceivedEvents()
        // The stop only has to outwait effects that ignore cancellation: a bound of a few seconds
        // at least, so that a cooperative stop delayed by a loaded machine never fails a test.
        let stopWait = max(wait, .seconds(5))
        let report = await loop.stop(timeout: stopWait)
        if !report.stoppedInTime {
            at.fail(
                "Loop did not stop",
                """
                The loop did not stop within \(stopWait): \(report.unfinishedEffects.map(\.description).joined(separator: ", ")) \
                did not respond to cancellation.
                """)
        }
    }

    // MARK: Checks

    private func check(
        from before: State,
        to after: State,
        against expectation: ((inout State) throws -> Void)?,
        action: String,
        _ exhaustivity: Exhaustivity,
        _ at: CallSite
    ) {
        var expected = exhaustivity.contains(.state) ? before : after
        do {
            try expectation?(&expected)
        } catch {
            at.fail("Assertion threw", "The assertion closure threw while \(action): \(error)")
            return
        }
        if expected != after {
            let difference = differenceForFailure(expected, after)
            if expectation == nil {
                at.fail(
                    "Unasserted state change: \(action)",
                    "The state changed while \(action), but no change was asserted:" + difference)
            } else {
                at.fail(
                    "State mismatch: \(action)",
                    "The state after \(action) does not match the expectation:" + difference)
            }
        } else if expectation != nil, exhaustivity.contains(.state), before == after {
            at.fail(
                "Asserted change did not happen: \(action)",
                "The state did not change while \(action), and the assertion closure did not change it either: leave the closure out when no change is expected.")
        }
    }

    /// Events effects sent before the test's next action and not received: skipped, and
    /// reported when every received event must be asserted.
    private func skipPending(before action: String, _ exhaustivity: Exhaustivity, _ at: CallSite) {
        let pending = journal.read { contents in
            Array(contents.transitions[progress.withLock { $0.cursor }...])
        }
        guard !pending.isEmpty else { return }
        if exhaustivity.contains(.receivedEvents) {
            at.fail(
                "Unreceived events: \(pending.count) before \(action)",
                """
                \(pending.count) event(s) from effects must be received before \(action): \
                \(pending.map { describe($0.event) }.joined(separator: ", ")).
                """)
        }
        skipReceivedEvents()
    }

    private func reportEffectFailures(_ exhaustivity: Exhaustivity, _ at: CallSite) {
        let failures = journal.read { contents in
            defer { contents.failures.removeAll() }
            return contents.failures
        }
        guard exhaustivity.contains(.effects) else { return }
        for failure in failures {
            guard case .failed(let error) = failure.kind else { continue }
            at.fail("Effect failed: \(describe(effect: failure))", "An effect threw: \(describe(effect: failure)) threw \(error).")
        }
    }

    /// "Running: …" or "No effect is running.", for messages about waiting.
    private func runningEffects() -> String {
        let running = journal.read { $0.running.values.sorted { $0.effect < $1.effect } }
        return running.isEmpty
            ? "No effect is running."
            : "Running: \(running.map(describe(effect:)).joined(separator: ", "))."
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

    /// An effect as a failure message names it: `"ticker" (effect 3)` or `feedback 0 (effect 3)`.
    private func describe(effect: EffectLifecycleEvent) -> String {
        let name = effect.feedbackLabel.map { "\"\($0)\"" } ?? "feedback \(effect.feedback)"
        return "\(name) (effect \(effect.effect))"
    }

    /// An event on one line, short enough for a failure message's first sentence.
    private func describe(_ event: Event) -> String {
        describeOnOneLine(event)
    }
}

/// What `receive(inAnyOrder:)` found among the pending transitions.
enum UnorderedMatch {
    /// Indices of the matched transitions, in arrival order.
    case matched([Int])
    /// With strict received-event checks: a transition among the next ones that is none of the
    /// expected events.
    case unexpected(Int)
}
#endif
