#if Durable && Testing
import CustomDump
import FeedbackLoop
import FeedbackLoopDurable
import FeedbackLoopTesting
import Foundation
import IssueReporting

/// A durable feature under test: every event the test sends and every event an effect sends
/// must be asserted — that it was journaled, in order, and the exact change it made to the
/// state — and ``restart(fileID:filePath:line:column:)`` checks that a loop recovered from the journal has the same state.
///
/// ```swift
/// @Test(arguments: Backend.allCases)
/// func chargesAndRecovers(backend: Backend) async throws {
///     let loop = try await DurableTestLoop(
///         initial: Ledger.State(), reduce: Ledger.reduce,
///         given: [.add(10)],                                   // history already journaled
///         feedbacks: { Ledger.feedbacks($0, effects: Probe(), charger: .answers) },
///         backend: backend)
///     await loop.send(.charge(5)) {
///         $0.pendingCharge = 5
///         $0.count = 2
///     }
///     await loop.receive(.charged(5)) {                         // the effect's event, journaled
///         $0.pendingCharge = nil
///         $0.charged = [5]
///         $0.count = 3
///     }
///     await loop.restart()                                      // recovered state == state before
///     await loop.finish()
/// }
/// ```
///
/// ## How it checks
/// The feature runs on a real `DurableLoop`, on the backend you choose, over an
/// ``InMemoryJournal``. The test loop reads what the loop journals, record by record, and
/// folds each event through your reducer itself: the state before and after every record is
/// known exactly, whatever the loop has reduced so far. Sending checks that the sent event is
/// the next record and that the loop answered with the state the fold gives (a reducer that
/// is not deterministic fails here, as it would fail recovery).
///
/// ## Restarting
/// ``restart(fileID:filePath:line:column:)`` stops the loop — its effects are cancelled, as in a crash they would die —
/// and recovers a new loop from the same journal. It fails if the recovered state differs from
/// the state the journal's events fold into. The recovered loop's feedbacks then start the
/// effects its state asks for, exactly as at a cold start: their events are new records, to
/// receive like any other; nothing is replayed through an effect. ``loop`` is the new loop from
/// then on.
///
/// ## Failures
/// Reported through pointfreeco's IssueReporting, so they fail the test under Swift Testing and
/// XCTest alike, at the line of the call that found them, with a first line that names what
/// failed — *State mismatch*, *Unasserted state change*, *Unexpected event*, *Event not
/// journaled*, *Unreceived events*, *Recovered state differs*, *Reducer not deterministic* — and
/// a diff of the expected and actual state where one applies, in the style of `TestLoop`.
///
/// Use a test loop from one task at a time; await its methods in order.
public final class DurableTestLoop<State: Codable & Sendable & Equatable, Event: Codable & Sendable & Equatable>: Sendable {
    struct Progress {
        var loop: DurableLoop<State, Event>
        /// The number of records asserted (or skipped) so far.
        var cursor: Int
        /// The state after the first `cursor` records.
        var state: State
        var isFinished = false
    }

    /// The journal the loop writes; a restart recovers from it.
    public let journal: InMemoryJournal
    /// The loop's id in ``journal``.
    public let id: String
    /// How long ``receive(_:timeout:assert:fileID:filePath:line:column:)`` waits by default.
    public let timeout: Duration

    let reduce: @Sendable (inout State, Event) -> Void
    let open: @Sendable (any EventJournal) async throws -> DurableLoop<State, Event>
    let recorder: RecordingJournal
    let progress: Lock<Progress>

    /// Journals `events` as the loop's history, then opens the loop: it recovers from them, and
    /// its feedbacks see the recovered state.
    ///
    /// - Parameters:
    ///   - id: The loop's id in the journal.
    ///   - initial: The state of a loop with an empty journal.
    ///   - reduce: The reducer under test.
    ///   - events: History to seed the journal with, as if an earlier run had journaled it.
    ///   - feedbacks: The feedbacks under test; give them fakes the test controls.
    ///   - backend: The inner loop's engine; test on all (`@Test(arguments: Backend.allCases)`).
    ///   - configuration: Snapshots and schema version, as for `DurableLoop`.
    ///   - timeout: How long (wall time) `receive` waits for an effect's event before failing.
    ///   - fileID: Where a failure is reported; leave the default.
    ///   - filePath: Where a failure is reported; leave the default.
    ///   - line: Where a failure is reported; leave the default.
    ///   - column: Where a failure is reported; leave the default.
    /// - Throws: what `DurableLoop.init` throws when the seeded history cannot be recovered (a
    ///   failing test, too: the state of the history is checked).
    public init(
        id: String = "test",
        initial: State,
        reduce: @escaping @Sendable (inout State, Event) -> Void,
        given events: [Event] = [],
        feedbacks: @escaping @Sendable (DurableContext) -> [Feedback<State, Event>] = { _ in [] },
        backend: Backend = .callback,
        configuration: DurableConfiguration = DurableConfiguration(),
        timeout: Duration = .seconds(2),
        fileID: StaticString = #fileID,
        filePath: StaticString = #filePath,
        line: UInt = #line,
        column: UInt = #column
    ) async throws {
        let journal = InMemoryJournal()
        let encoder = JSONEncoder()
        if !events.isEmpty {
            let epoch = try await journal.acquire(loop: id)
            let records = try events.enumerated().map { offset, event in
                JournalRecord(
                    sequence: UInt64(offset + 1), schemaVersion: configuration.schemaVersion,
                    payload: Array(try encoder.encode(event)))
            }
            try await journal.append(loop: id, epoch: epoch, events: records, snapshot: nil)
        }
        let recorder = RecordingJournal(journal)
        let open: @Sendable (any EventJournal) async throws -> DurableLoop<State, Event> = { journal in
            try await DurableLoop(
                id: id, journal: journal, initial: initial, reduce: reduce, feedbacks: feedbacks, backend: backend,
                configuration: configuration)
        }
        let loop = try await open(recorder)
        var state = initial
        for event in events { reduce(&state, event) }
        self.journal = journal
        self.id = id
        self.timeout = timeout
        self.reduce = reduce
        self.open = open
        self.recorder = recorder
        self.progress = Lock(Progress(loop: loop, cursor: events.count, state: state))
        if loop.state != state {
            CallSite(fileID: fileID, filePath: filePath, line: line, column: column).fail(
                "Recovered state differs: the given events",
                "The loop recovered from the given events into a state other than they fold into:" + Self.difference(state, loop.state))
        }
    }

    /// The loop under test (a new one after each ``restart(fileID:filePath:line:column:)``). Read its state or statistics
    /// if a test needs to; send through the test loop, so that events are asserted.
    public var loop: DurableLoop<State, Event> {
        progress.withLock { $0.loop }
    }

    /// The state after the last record the test asserted: what the next assertion starts from.
    public var state: State {
        progress.withLock { $0.state }
    }

    /// Every event in the journal so far, asserted or not, in order.
    public var journaled: [Event] {
        get async throws {
            try await records().map(\.event)
        }
    }

    // MARK: Sending and receiving

    /// Sends `event` with `sendAndWait`, and checks that it is the next record journaled and
    /// that `assert` turns the state before it into exactly the state after it (leave `assert`
    /// out when the event changes nothing).
    ///
    /// Fails if effects' events journaled before it were not received (they are skipped), or if
    /// the loop answered with a state other than the reducer gives.
    public func send(
        _ event: Event,
        assert expectation: ((inout State) throws -> Void)? = nil,
        fileID: StaticString = #fileID,
        filePath: StaticString = #filePath,
        line: UInt = #line,
        column: UInt = #column
    ) async {
        let at = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        guard let loop = running(at, doing: "Sent \(describe(event))") else { return }
        await skipUnreceived(before: "sending \(describe(event))", at)
        let answered: State
        do {
            answered = try await loop.sendAndWait(event)
        } catch {
            at.fail("Could not send \(describe(event))", "Sending \(describe(event)) failed: \(error).")
            return
        }
        let records: [Decoded]
        do {
            records = try await self.records()
        } catch {
            at.fail("Journal unreadable", "Reading the journal after sending \(describe(event)) failed: \(error).")
            return
        }
        let cursor = progress.withLock { $0.cursor }
        guard let index = records[cursor...].firstIndex(where: { $0.event == event }) else {
            at.fail("Event not journaled: \(describe(event))", "Sent \(describe(event)), but it is not in the journal after record \(cursor).")
            return
        }
        if index > cursor {
            at.fail(
                "Unreceived events: \(index - cursor) journaled before \(describe(event))",
                """
                Effects' events were journaled before \(describe(event)) and not received: \
                \(records[cursor..<index].map { describe($0.event) }.joined(separator: ", ")).

                Receive them before sending, and make sure the test controls when effects send.
                """)
            advance(through: index - 1, records)
        }
        let (before, after) = advance(through: index, records)
        if after != answered {
            at.fail(
                "Reducer not deterministic: \(describe(event))",
                "sendAndWait answered a state other than the reducer gives for the journaled events; recovery would not reproduce it:"
                    + Self.difference(after, answered))
        }
        check(from: before, to: after, against: expectation, action: "sending \(describe(event))", at)
    }

    /// Waits up to `timeout` for the next record journaled (an effect's event), checks that it
    /// is `event`, and checks the change it made as ``send(_:assert:fileID:filePath:line:column:)``
    /// does.
    public func receive(
        _ event: Event,
        timeout: Duration? = nil,
        assert expectation: ((inout State) throws -> Void)? = nil,
        fileID: StaticString = #fileID,
        filePath: StaticString = #filePath,
        line: UInt = #line,
        column: UInt = #column
    ) async {
        let at = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        guard running(at, doing: "Expected to receive \(describe(event))") != nil else { return }
        let cursor = progress.withLock { $0.cursor }
        let wait = timeout ?? self.timeout
        do {
            try await recorder.appends.wait(for: "record \(cursor + 1)", timeout: wait) { appends in
                appends.contains { $0.succeeded && ($0.sequences.last ?? 0) > UInt64(cursor) }
            }
        } catch {
            at.fail(
                "Event not journaled: waited \(wait) for \(describe(event))",
                "Expected to receive \(describe(event)), but nothing was journaled after record \(cursor) within \(wait).")
            return
        }
        let records: [Decoded]
        do {
            records = try await self.records()
        } catch {
            at.fail("Journal unreadable", "Reading the journal to receive \(describe(event)) failed: \(error).")
            return
        }
        let (before, after) = advance(through: cursor, records)
        guard records[cursor].event == event else {
            at.fail("Unexpected event: \(describe(records[cursor].event))", "Expected to receive \(describe(event)), the journal holds \(describe(records[cursor].event)).")
            return
        }
        check(from: before, to: after, against: expectation, action: "receiving \(describe(event))", at)
    }

    // MARK: Restarting and finishing

    /// Stops the loop as a crash would end it (its effects are cancelled; nothing more is
    /// journaled), recovers a new loop from the journal, and checks that its state equals the
    /// state the journaled events fold into. The new loop's feedbacks start the effects its state
    /// asks for; receive their events as usual.
    ///
    /// Fails if effects' events journaled before the restart were not received (they are
    /// skipped), or if the recovery throws.
    public func restart(
        fileID: StaticString = #fileID,
        filePath: StaticString = #filePath,
        line: UInt = #line,
        column: UInt = #column
    ) async {
        let at = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        guard let old = running(at, doing: "Restarted") else { return }
        await old.stop()
        await skipUnreceived(before: "restarting", at)
        let recovered: DurableLoop<State, Event>
        do {
            recovered = try await open(recorder)
        } catch {
            at.fail("Recovery failed", "The loop could not be recovered from its journal: \(error).")
            return
        }
        let expected = progress.withLock { progress in
            progress.loop = recovered
            return progress.state
        }
        if recovered.state != expected {
            at.fail(
                "Recovered state differs",
                "The loop recovered from its journal into a state other than before the restart:" + Self.difference(expected, recovered.state))
        }
    }

    /// Ends the test: fails if effects' events were journaled and not received, then stops the
    /// loop. Call it last in every test.
    public func finish(
        fileID: StaticString = #fileID,
        filePath: StaticString = #filePath,
        line: UInt = #line,
        column: UInt = #column
    ) async {
        let at = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        let (loop, wasFinished) = progress.withLock { progress in
            defer { progress.isFinished = true }
            return (progress.loop, progress.isFinished)
        }
        guard !wasFinished else { return }
        await skipUnreceived(before: "the end of the test", at)
        await loop.stop()
    }

    // MARK: Internals

    struct Decoded {
        var record: JournalRecord
        var event: Event
    }

    /// Every record of the loop, decoded.
    func records() async throws -> [Decoded] {
        var records: [Decoded] = []
        let decoder = JSONDecoder()
        while true {
            let page = try await journal.events(loop: id, after: UInt64(records.count), limit: 1_024)
            if page.isEmpty { return records }
            for record in page {
                decoder.userInfo[.durableSchemaVersion] = record.schemaVersion
                records.append(Decoded(record: record, event: try decoder.decode(Event.self, from: Data(record.payload))))
            }
        }
    }

    /// Moves the cursor past `records[index]`, folding the records in between; returns the state
    /// before and after that record.
    @discardableResult
    func advance(through index: Int, _ records: [Decoded]) -> (before: State, after: State) {
        progress.withLock { progress in
            var before = progress.state
            var state = progress.state
            while progress.cursor <= index {
                before = state
                reduce(&state, records[progress.cursor].event)
                progress.cursor += 1
            }
            progress.state = state
            return (before, state)
        }
    }

    /// The loop, or `nil` (and a failure) when the test loop has finished.
    func running(_ at: CallSite, doing action: String) -> DurableLoop<State, Event>? {
        let (loop, finished) = progress.withLock { ($0.loop, $0.isFinished) }
        if finished {
            at.fail("Test loop finished", "\(action) after the test loop finished.")
            return nil
        }
        return loop
    }

    /// Records journaled and not received: reported, and skipped.
    func skipUnreceived(before action: String, _ at: CallSite) async {
        guard let records = try? await records() else { return }
        let cursor = progress.withLock { $0.cursor }
        guard records.count > cursor else { return }
        at.fail(
            "Unreceived events: \(records.count - cursor) before \(action)",
            "Effects' events must be received before \(action): \(records[cursor...].map { describe($0.event) }.joined(separator: ", ")).")
        advance(through: records.count - 1, records)
    }

    func check(
        from before: State, to after: State, against expectation: ((inout State) throws -> Void)?,
        action: String, _ at: CallSite
    ) {
        var expected = before
        do {
            try expectation?(&expected)
        } catch {
            at.fail("Assertion threw", "The assertion closure threw while \(action): \(error)")
            return
        }
        if expected != after {
            if expectation == nil {
                at.fail(
                    "Unasserted state change: \(action)",
                    "The state changed while \(action), but no change was asserted:" + Self.difference(expected, after))
            } else {
                at.fail(
                    "State mismatch: \(action)",
                    "The state after \(action) does not match the expectation:" + Self.difference(expected, after))
            }
        } else if expectation != nil, before == after {
            at.fail(
                "Asserted change did not happen: \(action)",
                "The state did not change while \(action), and the assertion closure did not change it either: leave the closure out when no change is expected.")
        }
    }

    static func difference(_ expected: State, _ actual: State) -> String {
        differenceForFailure(expected, actual)
    }

    func describe(_ event: Event) -> String {
        describeOnOneLine(event)
    }
}
#endif
