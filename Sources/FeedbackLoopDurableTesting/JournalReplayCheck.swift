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
/// ## Loops of other features
/// A journal records which feature journals each loop (``feature``, as
/// `DurableConfiguration.feature` names it). A loop it records under another name than the
/// check's is not read at all — its records are another feature's, which the check's types might
/// decode into nonsense. A loop named in `loops` is then a failure
/// (``JournalCheckReport/Problem/otherFeature(journaled:checking:)``, naming the loop and both
/// names); when the check reads every loop of the journal, such loops are listed as skipped, so
/// that a journal that several features share can be checked feature by feature, and the check
/// fails only when it found no loop of its own feature among them (after a rename of the feature,
/// say). A loop with no recorded name (journaled before stores recorded them) is checked.
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
    /// The name of the feature whose loops are checked, as the journal records it: the current
    /// program's `DurableConfiguration.feature`, or the name
    /// `DurableConfiguration.defaultFeature(state:event:)` gives `State` and `Event`.
    public var feature: String

    /// A check of journals written by a feature with these types, replayed through `reduce`.
    ///
    /// - Parameters:
    ///   - initial: The state a loop starts from (see ``initial``).
    ///   - reduce: The current reducer.
    ///   - schemaVersion: The program's `DurableConfiguration.schemaVersion`. Default: 1.
    ///   - feature: The program's `DurableConfiguration.feature`; `nil` (the default), as there,
    ///     names the feature after `State` and `Event`.
    public init(
        initial: State, reduce: @escaping @Sendable (inout State, Event) -> Void, schemaVersion: Int = 1, feature: String? = nil
    ) {
        self.initial = initial
        self.reduce = reduce
        self.schemaVersion = schemaVersion
        self.feature = feature ?? DurableConfiguration.defaultFeature(state: State.self, event: Event.self)
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
            if let journaled = try await journal.feature(loop: id), journaled != feature {
                reports.append(otherFeature(id, journaled: journaled, named: loops != nil))
                continue
            }
            reports.append(try await check(loop: id, in: journal, snapshots: try await journal.snapshots(loop: id)))
        }
        return JournalCheckReport(feature: feature, loops: reports, everyLoop: loops == nil)
    }

    /// Checks the loops named in `loops`: against every snapshot the journal keeps when it is a
    /// `BrowsableJournal`, against its latest snapshot otherwise.
    public func report(journal: some EventJournal, loops: [String]) async throws -> JournalCheckReport {
        var reports: [JournalCheckReport.Loop] = []
        for id in loops {
            let snapshots: [JournalRecord]
            if let browsable = journal as? any BrowsableJournal {
                if let journaled = try await browsable.feature(loop: id), journaled != feature {
                    reports.append(otherFeature(id, journaled: journaled, named: true))
                    continue
                }
                snapshots = try await browsable.snapshots(loop: id)
            } else {
                snapshots = try await journal.latestSnapshot(loop: id).map { [$0] } ?? []
            }
            reports.append(try await check(loop: id, in: journal, snapshots: snapshots))
        }
        return JournalCheckReport(feature: feature, loops: reports, everyLoop: false)
    }

    /// The report of a loop that the journal records under the feature `journaled`, not this
    /// check's: none of its records read; a failure when the caller named the loop.
    func otherFeature(_ id: String, journaled: String, named: Bool) -> JournalCheckReport.Loop {
        var result = JournalCheckReport.Loop(id: id)
        result.journaledBy = journaled
        if named { result.firstUnreadable = .otherFeature(journaled: journaled, checking: feature) }
        return result
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
        /// The feature the journal records for the loop when it is not the check's
        /// (``JournalReplayCheck/feature``): none of the loop's records were read. The loop was
        /// skipped when the check read every loop, and failed
        /// (``Problem/otherFeature(journaled:checking:)``) when it was named.
        public var journaledBy: String?

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
        /// The journal records that the feature `journaled` journals the loop, not `checking`,
        /// the check's: none of its records were read.
        case otherFeature(journaled: String, checking: String)

        /// The record the finding is about (0 for ``otherFeature(journaled:checking:)``, which is
        /// about the loop).
        public var sequence: UInt64 {
            switch self {
            case .otherFeature: 0
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
            case .otherFeature(let journaled, let checking):
                "its journal was written by the feature '\(journaled)', not by '\(checking)', which this check replays; "
                    + "none of its records were read (another feature's loop under this id, or a renamed feature: "
                    + "see DurableConfiguration.feature)"
            }
        }
    }

    /// The feature the check replays (``JournalReplayCheck/feature``).
    public var feature: String

    /// Every loop checked, in order, and every loop skipped for another feature.
    public var loops: [Loop]

    /// Whether the check read every loop of the journal rather than the loops it was given.
    var everyLoop: Bool

    /// Whether the check read every loop of the journal and skipped them all, for other
    /// features: it found none of its own (a renamed feature, or a check given the wrong one).
    public var foundNoLoopOfItsFeature: Bool {
        everyLoop && !loops.isEmpty && loops.allSatisfy { $0.journaledBy != nil }
    }

    /// Whether every loop replays cleanly, and the check found loops of its feature when it
    /// read every loop of a journal that holds some.
    public var passed: Bool { loops.allSatisfy(\.passed) && !foundNoLoopOfItsFeature }

    public var description: String {
        var lines: [String] = []
        for loop in loops {
            let counts = "\(loop.events) event\(loop.events == 1 ? "" : "s"), \(loop.snapshots) snapshot\(loop.snapshots == 1 ? "" : "s")"
                + (loop.prunedThrough.map { ", events 1...\($0) pruned" } ?? "")
            if let journaled = loop.journaledBy, loop.passed {
                lines.append("skipped \(loop.id) (journaled by the feature '\(journaled)')")
                continue
            }
            if loop.passed {
                lines.append("ok      \(loop.id) (\(counts))")
                continue
            }
            lines.append("FAILED  \(loop.id) (\(counts))")
            for problem in [loop.firstUnreadable, loop.firstDivergence].compactMap({ $0 }) {
                if case .otherFeature = problem {
                    lines.append("  loop '\(loop.id)': \(problem)")
                    continue
                }
                lines.append("  loop '\(loop.id)', record \(problem.sequence): \(problem)".replacing("\n", with: "\n  "))
            }
        }
        let skipped = loops.filter { $0.journaledBy != nil && $0.passed }.count
        let checked = loops.count - skipped
        let failed = loops.filter { !$0.passed }.count
        lines.append(failed == 0 ? "\(checked) loops replay cleanly" : "\(failed) of \(checked) loops failed the replay check")
        if skipped > 0 { lines.append("\(skipped) loop\(skipped == 1 ? "" : "s") of other features skipped") }
        if foundNoLoopOfItsFeature {
            lines.append("FAILED: no loop of the journal was journaled by the feature '\(feature)', which this check replays")
        }
        return lines.joined(separator: "\n")
    }
}
#endif
