#if Durable && Testing
import CustomDump
import FeedbackLoopDurable
import FeedbackLoopTesting
import Foundation

/// Replays real journals through the current code, before a deploy does: every record of every
/// loop (or of the loops named) is decoded with the current `State` and `Event` types, the events
/// are run through the current reducer, and the state is compared with each snapshot the journal
/// holds.
///
/// Run it in CI against a copy of a production journal, so that a change that no longer decodes
/// last week's events, or a reducer that now turns them into another state than the one the
/// snapshot recorded, fails the build rather than a recovery:
///
/// ```swift
/// // Sources/orders-journal-check/main.swift
/// import FeedbackLoopDurableTesting
/// import Orders
///
/// let check = JournalReplayCheck(initial: Orders.State(), reduce: Orders.reduce, schemaVersion: 2)
/// exit(await check.command())   // orders-journal-check journal.sqlite [loop …]
/// ```
///
/// For another store (PostgreSQL), open it yourself and call ``report(journal:loops:)-(BrowsableJournal,_)``
/// (every loop, every snapshot the store keeps), or ``report(journal:loops:)-(EventJournal,_)``
/// with the loops' ids (a store that cannot list them is checked against its latest snapshot).
///
/// ## What it reports
/// Per loop, the first record that does not decode (or is of a newer schema than
/// ``schemaVersion``) and the first divergence — a snapshot whose state differs from the state
/// the events before it replay into — with the loop id, the sequence number and a diff of the
/// two states. After an undecodable event the replay cannot go on; it resumes from the next
/// snapshot, so that a divergence later in the journal is still found. It also reports a gap in
/// the sequence numbers and a snapshot newer than the loop's last event. It never appends nor
/// takes ownership.
///
/// ## Pruned journals
/// A journal with a retention policy (`JournalRetention`) has deleted the events before its
/// oldest kept snapshot: they can no longer be replayed. The check then decodes the events it
/// still has, replays from the oldest snapshot at or after the first of them, and compares the
/// newer snapshots; ``JournalCheckReport/Loop/prunedThrough`` says where the history starts. A
/// journal whose first event is not 1 and that has no snapshot to start from is reported as a
/// gap.
public struct JournalReplayCheck<State: Codable & Sendable & Equatable, Event: Codable & Sendable>: Sendable {
    /// The state of a loop whose journal is empty, as the loop is created with.
    public var initial: State
    /// The current reducer.
    public var reduce: @Sendable (inout State, Event) -> Void
    /// The current program's `DurableConfiguration.schemaVersion`: newer records are reported.
    public var schemaVersion: Int

    /// A check of journals written by a feature with these types, replayed through `reduce`.
    public init(initial: State, reduce: @escaping @Sendable (inout State, Event) -> Void, schemaVersion: Int = 1) {
        self.initial = initial
        self.reduce = reduce
        self.schemaVersion = schemaVersion
    }

    /// Checks every loop of `journal`, or those named in `loops`.
    ///
    /// - Throws: the store's errors (an unreadable file, a malformed row): the journal could not
    ///   be read, which is not a finding about the code.
    public func report(journal: some BrowsableJournal, loops: [String]? = nil) async throws -> JournalCheckReport {
        let ids: [String]
        if let loops { ids = loops } else { ids = try await journal.loopIDs() }
        var reports: [JournalCheckReport.Loop] = []
        for id in ids {
            reports.append(try await check(loop: id, in: journal, snapshots: try await journal.snapshots(loop: id)))
        }
        return JournalCheckReport(loops: reports)
    }

    /// Checks the loops named in `loops`: against every snapshot the journal keeps when it is a
    /// `BrowsableJournal`, against its latest snapshot otherwise.
    public func report(journal: some EventJournal, loops: [String]) async throws -> JournalCheckReport {
        var reports: [JournalCheckReport.Loop] = []
        for id in loops {
            let snapshots: [JournalRecord]
            if let browsable = journal as? any BrowsableJournal {
                snapshots = try await browsable.snapshots(loop: id)
            } else {
                snapshots = try await journal.latestSnapshot(loop: id).map { [$0] } ?? []
            }
            reports.append(try await check(loop: id, in: journal, snapshots: snapshots))
        }
        return JournalCheckReport(loops: reports)
    }

    /// Runs the check as a command: `arguments` are the program's name, the path of a SQLite
    /// journal, then optionally the ids of the loops to check (all by default). Prints the report
    /// and returns the exit status: 0 when every loop replays cleanly, 1 when a problem was found,
    /// 64 for bad arguments, 74 when the journal cannot be read.
    ///
    /// Point it at a copy: the check reads no more than it must, but opening a file as a
    /// `SQLiteJournal` creates the journal's tables if they are missing and switches the file
    /// to WAL mode.
    public func command(arguments: [String] = CommandLine.arguments) async -> Int32 {
        let program = arguments.first.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "journal-check"
        guard arguments.count >= 2, !arguments[1].hasPrefix("-") else {
            print("usage: \(program) <journal.sqlite> [loop …]\nReplays every loop of the journal (or the loops named) through this program's reducer.")
            return 64
        }
        let path = arguments[1]
        guard FileManager.default.fileExists(atPath: path) else {
            print("\(program): no journal at \(path)")
            return 74
        }
        do {
            let report = try await report(
                journal: try SQLiteJournal(path: path), loops: arguments.count > 2 ? Array(arguments.dropFirst(2)) : nil)
            print(report)
            return report.passed ? 0 : 1
        } catch {
            print("\(program): cannot read \(path): \(error)")
            return 74
        }
    }

    func check(loop id: String, in journal: some EventJournal, snapshots: [JournalRecord]) async throws -> JournalCheckReport.Loop {
        var result = JournalCheckReport.Loop(id: id)
        var snapshots = snapshots.sorted { $0.sequence < $1.sequence }[...]
        let decoder = JSONDecoder()
        // The replayed state, or nil after an undecodable event (or before the oldest snapshot of
        // a pruned journal) until the next snapshot.
        var state: State? = initial
        var sequence: UInt64 = 0
        // The snapshot a pruned journal's replay starts from: read, not compared.
        var start: UInt64?

        func note(_ problem: JournalCheckReport.Problem) {
            switch problem {
            case .divergence: if result.firstDivergence == nil { result.firstDivergence = problem }
            default: if result.firstUnreadable == nil { result.firstUnreadable = problem }
            }
        }
        func decode<Value: Decodable>(_ type: Value.Type, _ record: JournalRecord, snapshot: Bool) -> Value? {
            guard record.schemaVersion <= schemaVersion else {
                note(.newerSchema(sequence: record.sequence, found: record.schemaVersion, supported: schemaVersion))
                return nil
            }
            decoder.userInfo[.durableSchemaVersion] = record.schemaVersion
            do {
                return try decoder.decode(type, from: Data(record.payload))
            } catch {
                note(snapshot
                    ? .undecodableSnapshot(sequence: record.sequence, reason: String(describing: error))
                    : .undecodableEvent(sequence: record.sequence, reason: String(describing: error)))
                return nil
            }
        }
        /// Compares with (or, after an undecodable event, restarts from) the snapshots up to here.
        func reachSnapshots() {
            while let snapshot = snapshots.first, snapshot.sequence <= sequence {
                snapshots.removeFirst()
                guard snapshot.sequence == sequence else { continue }
                if snapshot.sequence != start { result.snapshots += 1 }
                guard let recorded = decode(State.self, snapshot, snapshot: true) else { continue }
                if let replayed = state, replayed != recorded {
                    let difference = diff(recorded, replayed, format: .proportional) ?? "(the states differ, but print the same)"
                    note(.divergence(sequence: sequence, difference: difference))
                }
                state = recorded
            }
        }

        if let first = try await journal.events(loop: id, after: 0, limit: 1).first?.sequence, first > 1 {
            guard let oldest = snapshots.first(where: { $0.sequence >= first }) else {
                note(.gap(expected: 1, found: first))
                return result
            }
            result.prunedThrough = first - 1
            start = oldest.sequence
            state = nil
            sequence = first - 1
        }
        while true {
            let page = try await journal.events(loop: id, after: sequence, limit: 1_024)
            if page.isEmpty { break }
            for record in page {
                guard record.sequence == sequence + 1 else {
                    note(.gap(expected: sequence + 1, found: record.sequence))
                    return result
                }
                sequence = record.sequence
                result.events += 1
                if let event = decode(Event.self, record, snapshot: false) {
                    if state != nil { reduce(&state!, event) }
                } else {
                    state = nil
                }
                reachSnapshots()
            }
        }
        if let ahead = snapshots.last {
            note(.snapshotAhead(sequence: ahead.sequence, lastEvent: sequence))
        }
        return result
    }
}

/// What ``JournalReplayCheck`` found, loop by loop. Its `description` is the report the command
/// prints.
public struct JournalCheckReport: Sendable, CustomStringConvertible {
    /// One loop's findings.
    public struct Loop: Sendable {
        /// The loop's id.
        public var id: String
        /// Events read (decoded or not).
        public var events = 0
        /// Snapshots compared.
        public var snapshots = 0
        /// The last event a retention policy deleted, when the journal's events start after 1:
        /// the replay started from the oldest snapshot the journal keeps; `nil` when the journal
        /// holds every event.
        public var prunedThrough: UInt64?
        /// The first record that could not be read: undecodable, of a newer schema, a gap, a
        /// snapshot newer than the last event.
        public var firstUnreadable: Problem?
        /// The first snapshot the replayed events do not reproduce.
        public var firstDivergence: Problem?

        /// Whether the loop replays cleanly.
        public var passed: Bool { firstUnreadable == nil && firstDivergence == nil }
    }

    /// A finding, with the sequence number it is about.
    public enum Problem: Sendable, Hashable, CustomStringConvertible {
        /// The event does not decode with the current `Event` type.
        case undecodableEvent(sequence: UInt64, reason: String)
        /// The snapshot does not decode with the current `State` type.
        case undecodableSnapshot(sequence: UInt64, reason: String)
        /// The record was written by a newer schema than the check's.
        case newerSchema(sequence: UInt64, found: Int, supported: Int)
        /// The journal skips from `expected - 1` to `found`.
        case gap(expected: UInt64, found: UInt64)
        /// A snapshot at `sequence`, after the last event `lastEvent`.
        case snapshotAhead(sequence: UInt64, lastEvent: UInt64)
        /// The snapshot at `sequence` differs from the replayed state; `difference` is a diff of
        /// the snapshot (−) and the replayed state (+).
        case divergence(sequence: UInt64, difference: String)

        /// The record the finding is about.
        public var sequence: UInt64 {
            switch self {
            case .undecodableEvent(let sequence, _), .undecodableSnapshot(let sequence, _), .newerSchema(let sequence, _, _),
                .snapshotAhead(let sequence, _), .divergence(let sequence, _):
                sequence
            case .gap(let expected, _): expected
            }
        }

        public var description: String {
            switch self {
            case .undecodableEvent(let sequence, let reason):
                "event \(sequence) does not decode: \(reason)"
            case .undecodableSnapshot(let sequence, let reason):
                "the snapshot at \(sequence) does not decode: \(reason)"
            case .newerSchema(let sequence, let found, let supported):
                "record \(sequence) has schema version \(found), newer than the check's \(supported)"
            case .gap(let expected, let found):
                "the journal skips from event \(expected - 1) to \(found)"
            case .snapshotAhead(let sequence, let lastEvent):
                "a snapshot at \(sequence) is newer than the last event, \(lastEvent)"
            case .divergence(let sequence, let difference):
                "the events up to \(sequence) replay into a state other than the snapshot at \(sequence):\n\n"
                    + difference.indenting(by: 2) + "\n\n(Snapshot: −, Replayed: +)"
            }
        }
    }

    /// Every loop checked, in order.
    public var loops: [Loop]

    /// Whether every loop replays cleanly.
    public var passed: Bool { loops.allSatisfy(\.passed) }

    public var description: String {
        var lines: [String] = []
        for loop in loops {
            let counts = "\(loop.events) event\(loop.events == 1 ? "" : "s"), \(loop.snapshots) snapshot\(loop.snapshots == 1 ? "" : "s")"
                + (loop.prunedThrough.map { ", events 1...\($0) pruned" } ?? "")
            if loop.passed {
                lines.append("ok      \(loop.id) (\(counts))")
                continue
            }
            lines.append("FAILED  \(loop.id) (\(counts))")
            for problem in [loop.firstUnreadable, loop.firstDivergence].compactMap({ $0 }) {
                lines.append("  loop '\(loop.id)', record \(problem.sequence): \(problem)".replacing("\n", with: "\n  "))
            }
        }
        let failed = loops.filter { !$0.passed }.count
        lines.append(failed == 0 ? "\(loops.count) loops replay cleanly" : "\(failed) of \(loops.count) loops failed the replay check")
        return lines.joined(separator: "\n")
    }
}
#endif
