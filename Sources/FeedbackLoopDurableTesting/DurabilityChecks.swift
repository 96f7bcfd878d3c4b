#if Durable && Testing
import FeedbackLoop
import FeedbackLoopDurable
import Foundation

/// What the durability checks need from a store: handles on one storage, and a way to depose an
/// owner.
public struct DurabilityEnvironment: Sendable {
    /// A new handle on the same storage each call, as a restarted process would open it.
    public var makeJournal: @Sendable () async throws -> any EventJournal
    /// Makes another owner take `loop` over from its live owner (a second process acquiring a
    /// SQLite journal; a lease expiring and another node taking it, for a leased store).
    public var depose: @Sendable (_ loop: String) async throws -> Void
    /// A new handle on the same storage that applies a retention policy (`nil`: none), for
    /// the retention checks; `nil` for a store without retention, whose retention checks then fail.
    public var makeJournalWithRetention: (@Sendable (JournalRetention?) async throws -> any BrowsableJournal)?
    /// The inner loop's backend.
    public var backend: Backend

    /// An environment for one store and one backend.
    public init(
        backend: Backend,
        makeJournal: @escaping @Sendable () async throws -> any EventJournal,
        depose: @escaping @Sendable (_ loop: String) async throws -> Void,
        makeJournalWithRetention: (@Sendable (JournalRetention?) async throws -> any BrowsableJournal)? = nil
    ) {
        self.backend = backend
        self.makeJournal = makeJournal
        self.depose = depose
        self.makeJournalWithRetention = makeJournalWithRetention
    }
}

/// The durability suite every `EventJournal` passes, on every backend: each
/// check throws a ``DurabilityCheckFailure`` (or the loop's own error) when its rule is broken.
///
/// ```swift
/// @Test(arguments: Backend.allCases)
/// func persistBeforeAct(backend: Backend) async throws {
///     try await DurabilityChecks.persistBeforeAct(environment(backend))
/// }
/// ```
public enum DurabilityChecks {
    /// Every check, by name, for suites that run them all.
    public static let all: [(name: String, run: @Sendable (DurabilityEnvironment) async throws -> Void)] = [
        ("persistBeforeAct", persistBeforeAct),
        ("groupCommit", groupCommit),
        ("snapshots", snapshots),
        ("recovery", recovery),
        ("effectEventsAreJournaledDensely", effectEventsAreJournaledDensely),
        ("undecodableRecord", undecodableRecord),
        ("snapshotAheadOfEvents", snapshotAheadOfEvents),
        ("anotherFeaturesLoop", anotherFeaturesLoop),
        ("aLoopWithoutAFeatureIsAdopted", aLoopWithoutAFeatureIsAdopted),
        ("replayCheckOfAnotherFeaturesLoop", replayCheckOfAnotherFeaturesLoop),
        ("newerSchemaVersion", newerSchemaVersion),
        ("eventAfterStop", eventAfterStop),
        ("deposedOwnerIsFenced", deposedOwnerIsFenced),
        ("retention", retention),
        ("deposedOwnerPrunesNothing", deposedOwnerPrunesNothing),
        ("pruningIsBounded", pruningIsBounded),
        ("archive", archive),
        ("failedArchiveDeletesNothing", failedArchiveDeletesNothing),
    ]

    static func loopID(_ check: String) -> String {
        "\(check)-\(UInt64.random(in: 0...UInt64.max))"
    }

    static func open(
        _ id: String, _ journal: any EventJournal, _ environment: DurabilityEnvironment,
        effects: Probe<Ledger.EffectEntry> = Probe(), charger: Ledger.Charger = .hangs,
        configuration: DurableConfiguration = DurableConfiguration()
    ) async throws -> DurableLoop<Ledger.State, Ledger.Event> {
        try await DurableLoop(
            id: id, journal: journal, initial: Ledger.State(), reduce: Ledger.reduce,
            feedbacks: { Ledger.feedbacks($0, effects: effects, charger: charger) },
            backend: environment.backend, configuration: configuration)
    }

    static func fold(_ events: [Ledger.Event]) -> Ledger.State {
        var state = Ledger.State()
        for event in events { Ledger.reduce(&state, event) }
        return state
    }

    /// An event is journaled before the reducer sees it, before its effects start and before
    /// `sendAndWait` answers.
    @Sendable
    public static func persistBeforeAct(_ environment: DurabilityEnvironment) async throws {
        let id = loopID("persistBeforeAct")
        let journal = RecordingJournal(try await environment.makeJournal())
        let effects = Probe<Ledger.EffectEntry>()
        let loop = try await open(id, journal, environment, effects: effects)
        journal.hold()
        try loop.send(.charge(5))
        let answered = Probe<Ledger.State>()
        Task { if let state = try? await loop.sendAndWait(.add(1)) { answered.record(state) } }
        try await journal.begun.wait(for: "the append of event 1 to begin") { $0.contains(1) }
        try require(loop.state.pendingCharge == nil, "the reducer saw event 1 before it was journaled")
        try require(effects.entries.isEmpty, "an effect started before its event was journaled: \(effects.entries)")
        try require(answered.entries.isEmpty, "sendAndWait answered before its event was journaled")
        journal.release()
        try await effects.wait(for: "the charge effect") { $0.contains { $0.startedAmount == 5 } }
        try await answered.wait(for: "sendAndWait to answer") { !$0.isEmpty }
        try require(answered.entries.first?.total == 1, "sendAndWait answered \(answered.entries)")
        let durable = try await environment.makeJournal().events(loop: id, after: 0, limit: 10)
        try require(durable.map(\.sequence) == [1, 2], "a fresh handle sees events \(durable.map(\.sequence)), not [1, 2]")
        await loop.stop()
    }

    /// Events that wait while a transaction is in flight go into the next one together.
    @Sendable
    public static func groupCommit(_ environment: DurabilityEnvironment) async throws {
        let id = loopID("groupCommit")
        let journal = RecordingJournal(try await environment.makeJournal())
        let loop = try await open(id, journal, environment)
        journal.hold()
        try loop.send(.add(1))
        try await journal.begun.wait(for: "the append of event 1 to begin") { $0.contains(1) }
        for amount in 2...11 { try loop.send(.add(amount)) }
        journal.release()
        try await journal.appends.wait(for: "events 2...11 to be journaled") { $0.contains { $0.sequences.last == 11 } }
        let batches = journal.appends.entries.map(\.sequences)
        try require(batches == [[1], Array(2...11)], "expected one transaction for event 1, one for 2...11; got \(batches)")
        let state = try await loop.sendAndWait(.add(0))
        try require(state.total == 66 && state.count == 12, "state after group commit: \(state)")
        await loop.stop()
    }

    /// A snapshot every N events, in the same transaction as the event that reaches N; recovery
    /// starts from it and replays only the tail (reading from the snapshot's own event, to check
    /// that the journal holds it).
    @Sendable
    public static func snapshots(_ environment: DurabilityEnvironment) async throws {
        let id = loopID("snapshots")
        let journal = RecordingJournal(try await environment.makeJournal())
        let configuration = DurableConfiguration(snapshotEvery: 4)
        let loop = try await open(id, journal, environment, configuration: configuration)
        let events = (1...10).map { Ledger.Event.add($0) }
        for event in events { try await loop.sendAndWait(event) }
        await loop.stop()
        let withSnapshots = journal.appends.entries.filter { $0.snapshot != nil }
        try require(
            withSnapshots.map(\.snapshot) == [4, 8] && withSnapshots.map(\.sequences) == [[4], [8]],
            "expected snapshots 4 and 8 in the appends of events 4 and 8; got \(journal.appends.entries)")
        let snapshot = try await environment.makeJournal().latestSnapshot(loop: id)
        try require(snapshot?.sequence == 8, "latest snapshot: \(String(describing: snapshot?.sequence)), not 8")
        let decoded = try JSONDecoder().decode(Ledger.State.self, from: Data(snapshot?.payload ?? []))
        try require(decoded == fold(Array(events.prefix(8))), "the snapshot at 8 is \(decoded)")

        let reopened = ReadCountingJournal(try await environment.makeJournal())
        let recovered = try await open(id, reopened, environment, configuration: configuration)
        try require(recovered.recoveredSequence == 10, "recovered at \(recovered.recoveredSequence), not 10")
        try require(recovered.state == fold(events), "recovered \(recovered.state), expected \(fold(events))")
        // From the snapshot's own event, which recovery checks the journal holds.
        try require(reopened.reads.entries.first == 7, "recovery read events after \(reopened.reads.entries), not from the snapshot's event 8")
        await recovered.stop()
    }

    /// A loop recovered from a journal that outlived it has the same state and restarts exactly
    /// the effects that state asks for, with the same stable idempotency key and a newer epoch.
    @Sendable
    public static func recovery(_ environment: DurabilityEnvironment) async throws {
        let id = loopID("recovery")
        let firstEffects = Probe<Ledger.EffectEntry>()
        let first = try await open(id, try await environment.makeJournal(), environment, effects: firstEffects)
        try await first.sendAndWait(.add(1))
        try await first.sendAndWait(.add(2))
        let final = try await first.sendAndWait(.charge(7))
        try await firstEffects.wait(for: "the first run's charge effect") { $0.contains { $0.startedAmount == 7 } }
        let firstEpoch = first.epoch
        await first.stop()
        try require(firstEffects.entries.contains(.cancelled(7)), "stop did not cancel the effect: \(firstEffects.entries)")

        let secondEffects = Probe<Ledger.EffectEntry>()
        let second = try await open(id, try await environment.makeJournal(), environment, effects: secondEffects)
        try require(second.state == final, "recovered \(second.state), expected \(final)")
        try require(second.sequence == 3 && second.recoveredSequence == 3, "recovered at \(second.sequence), not 3")
        try require(second.epoch > firstEpoch, "epoch \(second.epoch) after \(firstEpoch)")
        try await secondEffects.wait(for: "the recovered loop to restart the charge effect") { !$0.isEmpty }
        guard case .started(7, let key) = secondEffects.entries.first,
            case .started(7, let firstKey) = firstEffects.entries.first
        else { throw DurabilityCheckFailure("effects after recovery: \(secondEffects.entries)") }
        try require(key.stableKey == firstKey.stableKey && key.epoch == second.epoch, "keys \(firstKey) then \(key)")
        let state = try await second.sendAndWait(.add(10))
        try require(state.total == 13 && second.sequence == 4, "after recovery: \(state) at \(second.sequence)")
        await second.stop()
        try require(
            secondEffects.entries.filter { $0.startedAmount != nil }.count == 1,
            "the recovered loop started \(secondEffects.entries), not exactly the one effect its state asks for")
    }

    /// An effect's events are journaled like external ones, and sequence numbers are dense.
    @Sendable
    public static func effectEventsAreJournaledDensely(_ environment: DurabilityEnvironment) async throws {
        let id = loopID("effectEvents")
        let journal = RecordingJournal(try await environment.makeJournal())
        let effects = Probe<Ledger.EffectEntry>()
        let loop = try await open(id, journal, environment, effects: effects, charger: .answers)
        let charged = Probe<[Int]>()
        let observation = loop.observe { charged.record($0.charged) }
        for amount in 1...5 {
            try loop.send(.add(amount))
            try loop.send(.charge(amount))
            do {
                try await charged.wait(for: "charge \(amount) to be answered") { $0.last?.count == amount }
            } catch {
                throw DurabilityCheckFailure(
                    "\(error); effects: \(effects.entries); appends: \(journal.appends.entries); sequence \(loop.sequence)")
            }
        }
        observation.cancel()
        try require(loop.sequence == 15, "15 events (5 adds, 5 charges, 5 answers) reduced; sequence is \(loop.sequence)")
        await loop.stop()
        let records = try await environment.makeJournal().events(loop: id, after: 0, limit: 100)
        try require(records.map(\.sequence) == Array(1...15), "journal sequences \(records.map(\.sequence))")
        let events = try records.map { try JSONDecoder().decode(Ledger.Event.self, from: Data($0.payload)) }
        let expected = (1...5).flatMap { [Ledger.Event.add($0), .charge($0), .charged($0)] }
        try require(events == expected, "journaled \(events)")
    }

    /// A record that cannot be decoded stops recovery with an error naming the loop and the
    /// sequence number.
    @Sendable
    public static func undecodableRecord(_ environment: DurabilityEnvironment) async throws {
        let id = loopID("undecodable")
        let loop = try await open(id, try await environment.makeJournal(), environment)
        try await loop.sendAndWait(.add(1))
        try await loop.sendAndWait(.add(2))
        await loop.stop()
        let journal = try await environment.makeJournal()
        let epoch = try await journal.acquire(loop: id)
        try await journal.append(
            loop: id, epoch: epoch,
            events: [JournalRecord(sequence: 3, schemaVersion: 1, payload: Array(#"{"refund":{"_0":3}}"#.utf8))],
            snapshot: nil)
        try await journal.release(loop: id, epoch: epoch)
        do {
            let recovered = try await open(id, try await environment.makeJournal(), environment)
            await recovered.stop()
            throw DurabilityCheckFailure("a loop recovered past an undecodable event at \(recovered.sequence)")
        } catch DurableLoopError.undecodableEvent(let loop, let sequence, let reason) {
            try require(loop == id && sequence == 3, "the error names loop \(loop), event \(sequence): \(reason)")
        }
        try await requireUnwritten(id, events: [1, 2, 3], environment)
    }

    /// A snapshot of an event the journal does not hold (the events were truncated, or the
    /// snapshot is another loop's) stops recovery with an error naming the loop and the
    /// snapshot's sequence, and nothing is written.
    @Sendable
    public static func snapshotAheadOfEvents(_ environment: DurabilityEnvironment) async throws {
        let id = loopID("snapshotAhead")
        let journal = try await environment.makeJournal()
        let epoch = try await journal.acquire(loop: id)
        let add = Array(try JSONEncoder().encode(Ledger.Event.add(1)))
        let state = Array(try JSONEncoder().encode(fold(Array(repeating: .add(1), count: 5))))
        // Events 1 and 2, and a snapshot that claims to include event 5.
        try await journal.append(
            loop: id, epoch: epoch,
            events: [JournalRecord(sequence: 1, schemaVersion: 1, payload: add), JournalRecord(sequence: 2, schemaVersion: 1, payload: add)],
            snapshot: JournalRecord(sequence: 5, schemaVersion: 1, payload: state))
        try await journal.release(loop: id, epoch: epoch)
        do {
            let recovered = try await open(id, try await environment.makeJournal(), environment)
            await recovered.stop()
            throw DurabilityCheckFailure("a loop recovered from a snapshot of event 5 over events 1...2, at \(recovered.sequence)")
        } catch let error as DurableLoopError {
            guard case .snapshotAheadOfEvents(let loop, let sequence) = error else { throw error }
            try require(loop == id && sequence == 5, "the error names loop \(loop), event \(sequence)")
            try require(error.description.contains("'\(id)'") && error.description.contains("event 5"), "\(error)")
        }
        try await requireUnwritten(id, events: [1, 2], environment)
    }

    /// Opening a loop id that another feature journaled — another `State` and `Event` (whose
    /// records may well decode as this feature's: `Tally`'s `add` reads as `Ledger`'s), or the
    /// same types under another `DurableConfiguration.feature` name — fails with an error
    /// naming the loop and both features, and takes no epoch.
    @Sendable
    public static func anotherFeaturesLoop(_ environment: DurabilityEnvironment) async throws {
        let id = loopID("anotherFeature")
        let ledger = DurableConfiguration.defaultFeature(state: Ledger.State.self, event: Ledger.Event.self)
        let tally = DurableConfiguration.defaultFeature(state: Tally.State.self, event: Tally.Event.self)
        let first = try await open(id, try await environment.makeJournal(), environment)
        try await first.sendAndWait(.add(1))
        try await first.sendAndWait(.add(2))
        let epoch = first.epoch
        await first.stop()
        do {
            let other = try await DurableLoop(
                id: id, journal: try await environment.makeJournal(), initial: Tally.State(), reduce: Tally.reduce,
                backend: environment.backend, configuration: DurableConfiguration(schemaVersion: Tally.schemaVersion))
            await other.stop()
            throw DurabilityCheckFailure("a Tally opened the Ledger's loop, recovering \(other.state) at \(other.sequence)")
        } catch let error as DurableLoopError {
            guard case .featureMismatch(let loop, let journaled, let opening) = error else { throw error }
            try require(loop == id && journaled == ledger && opening == tally, "featureMismatch(\(loop), \(journaled), \(opening))")
            try require(error.description.contains("'\(id)'") && error.description.contains(ledger) && error.description.contains(tally), "\(error)")
        }
        do {
            let renamed = try await open(id, try await environment.makeJournal(), environment, configuration: DurableConfiguration(feature: "ledger"))
            await renamed.stop()
            throw DurabilityCheckFailure("the Ledger opened under the feature name 'ledger' a loop journaled as '\(ledger)'")
        } catch DurableLoopError.featureMismatch(let loop, let journaled, let opening) {
            try require(loop == id && journaled == ledger && opening == "ledger", "featureMismatch(\(loop), \(journaled), \(opening))")
        }
        try await requireUnwritten(id, events: [1, 2], environment)
        let reopened = try await open(id, try await environment.makeJournal(), environment)
        try require(reopened.epoch == epoch + 1, "the refused opens took epochs: \(epoch), then \(reopened.epoch)")
        try require(reopened.state == fold([.add(1), .add(2)]), "the feature's own loop recovered \(reopened.state)")
        await reopened.stop()
    }

    /// The replay check of a loop that another feature journaled reads none of its records and
    /// fails, naming the loop and both features: `Tally`'s types would decode `Ledger`'s
    /// `add` events and replay them as their own.
    @Sendable
    public static func replayCheckOfAnotherFeaturesLoop(_ environment: DurabilityEnvironment) async throws {
        let id = loopID("checkedAsAnotherFeature")
        let ledger = DurableConfiguration.defaultFeature(state: Ledger.State.self, event: Ledger.Event.self)
        let tally = DurableConfiguration.defaultFeature(state: Tally.State.self, event: Tally.Event.self)
        let loop = try await open(id, try await environment.makeJournal(), environment)
        try await loop.sendAndWait(.add(1))
        try await loop.sendAndWait(.add(2))
        await loop.stop()
        let journal = try await environment.makeJournal()
        let other = try await JournalReplayCheck(initial: Tally.State(), reduce: Tally.reduce, schemaVersion: Tally.schemaVersion)
            .report(journal: journal, loops: [id])
        try require(
            !other.passed && other.loops.count == 1 && other.loops[0].events == 0 && other.loops[0].journaledBy == ledger
                && other.loops[0].firstUnreadable == .otherFeature(journaled: ledger, checking: tally),
            "Tally's replay check of a Ledger loop: \(other)")
        try require(
            other.description.contains("FAILED  \(id)") && other.description.contains("'\(id)'") && other.description.contains(ledger),
            "the report does not name the loop and its feature:\n\(other)")
        let renamed = try await JournalReplayCheck(initial: Ledger.State(), reduce: Ledger.reduce, feature: "ledger")
            .report(journal: journal, loops: [id])
        try require(
            renamed.loops.first?.firstUnreadable == .otherFeature(journaled: ledger, checking: "ledger"),
            "the Ledger's replay check under another name: \(renamed)")
        let own = try await JournalReplayCheck(initial: Ledger.State(), reduce: Ledger.reduce).report(journal: journal, loops: [id])
        try require(own.passed && own.loops.first?.events == 2, "the Ledger's own replay check: \(own)")
        try await requireUnwritten(id, events: [1, 2], environment)
    }

    /// A loop journaled with no feature recorded — before stores recorded features, or through
    /// `EventJournal.acquire(loop:)` — takes the name of the first feature that opens it, and
    /// is then refused to any other.
    @Sendable
    public static func aLoopWithoutAFeatureIsAdopted(_ environment: DurabilityEnvironment) async throws {
        let id = loopID("adopted")
        let journal = try await environment.makeJournal()
        let epoch = try await journal.acquire(loop: id)
        let add = Array(try JSONEncoder().encode(Ledger.Event.add(3)))
        try await journal.append(loop: id, epoch: epoch, events: [JournalRecord(sequence: 1, schemaVersion: 1, payload: add)], snapshot: nil)
        try await journal.release(loop: id, epoch: epoch)
        let adopting = try await DurableLoop(
            id: id, journal: try await environment.makeJournal(), initial: Tally.State(), reduce: Tally.reduce,
            backend: environment.backend, configuration: DurableConfiguration(feature: "tally", schemaVersion: Tally.schemaVersion))
        try require(adopting.state == Tally.State(total: 3), "the first feature to open the loop recovered \(adopting.state)")
        try await adopting.sendAndWait(.add(4))
        await adopting.stop()
        do {
            let ledger = try await open(id, try await environment.makeJournal(), environment)
            await ledger.stop()
            throw DurabilityCheckFailure("a Ledger opened the loop the Tally adopted, recovering \(ledger.state)")
        } catch DurableLoopError.featureMismatch(let loop, let journaled, _) {
            try require(loop == id && journaled == "tally", "featureMismatch(\(loop), \(journaled), …)")
        }
        try await requireUnwritten(id, events: [1, 2], environment)
    }

    /// `loop`'s journal holds exactly the events `events`: a failed recovery appended nothing.
    static func requireUnwritten(_ loop: String, events: [UInt64], _ environment: DurabilityEnvironment) async throws {
        let stored = try await environment.makeJournal().events(loop: loop, after: 0, limit: 100).map(\.sequence)
        try require(stored == events, "a failed recovery left events \(stored), not \(events)")
    }

    /// A record written by a newer schema version is refused with a clear error.
    @Sendable
    public static func newerSchemaVersion(_ environment: DurabilityEnvironment) async throws {
        let id = loopID("schema")
        let newer = try await open(id, try await environment.makeJournal(), environment, configuration: DurableConfiguration(schemaVersion: 2))
        try await newer.sendAndWait(.add(1))
        await newer.stop()
        do {
            let older = try await open(id, try await environment.makeJournal(), environment)
            await older.stop()
            throw DurabilityCheckFailure("a version-1 loop recovered a version-2 journal")
        } catch DurableLoopError.unsupportedSchemaVersion(let loop, let sequence, let found, let supported) {
            try require(loop == id && sequence == 1 && found == 2 && supported == 1, "error: \(loop) \(sequence) \(found) \(supported)")
        }
        try await requireUnwritten(id, events: [1], environment)
    }

    /// After stop, `send` and `sendAndWait` throw `DurableLoopError.stopped(loop:)`
    /// and nothing more is journaled.
    @Sendable
    public static func eventAfterStop(_ environment: DurabilityEnvironment) async throws {
        let id = loopID("afterStop")
        let loop = try await open(id, try await environment.makeJournal(), environment)
        try await loop.sendAndWait(.add(1))
        await loop.stop()
        do {
            try loop.send(.add(2))
            throw DurabilityCheckFailure("send after stop did not throw")
        } catch DurableLoopError.stopped(let loop) {
            try require(loop == id, "the error names \(loop)")
        }
        do {
            try await loop.sendAndWait(.add(3))
            throw DurabilityCheckFailure("sendAndWait after stop did not throw")
        } catch DurableLoopError.stopped {}
        let records = try await environment.makeJournal().events(loop: id, after: 0, limit: 10)
        try require(records.map(\.sequence) == [1], "journal after stop: \(records.map(\.sequence))")
    }

    /// An owner deposed by another cannot append: its next append is refused, it stops, and its
    /// effects are cancelled.
    @Sendable
    public static func deposedOwnerIsFenced(_ environment: DurabilityEnvironment) async throws {
        let id = loopID("fenced")
        let effects = Probe<Ledger.EffectEntry>()
        let owner = try await open(id, try await environment.makeJournal(), environment, effects: effects)
        try await owner.sendAndWait(.charge(9))
        try await effects.wait(for: "the owner's charge effect") { $0.contains { $0.startedAmount == 9 } }
        try await environment.depose(id)
        do {
            try await owner.sendAndWait(.add(1))
            throw DurabilityCheckFailure("a deposed owner's append was accepted")
        } catch JournalError.fenced(let loop, let epoch) {
            try require(loop == id && epoch == owner.epoch, "fenced \(loop) at \(epoch)")
        }
        try require(owner.failure is JournalError, "failure: \(String(describing: owner.failure))")
        try await effects.wait(for: "the deposed owner's effect to be cancelled") { $0.contains(.cancelled(9)) }
        do {
            try owner.send(.add(2))
            throw DurabilityCheckFailure("the deposed owner accepted an event")
        } catch DurableLoopError.stopped {}
        let records = try await environment.makeJournal().events(loop: id, after: 0, limit: 10)
        try require(records.map(\.sequence) == [1], "journal after the deposed owner's attempts: \(records.map(\.sequence))")
        await owner.stop()
    }
}

extension DurabilityChecks {
    static func journal(_ environment: DurabilityEnvironment, _ retention: JournalRetention?) async throws -> any BrowsableJournal {
        guard let make = environment.makeJournalWithRetention else {
            throw DurabilityCheckFailure("the environment has no makeJournalWithRetention: the store cannot be checked for retention")
        }
        return try await make(retention)
    }

    /// What a journal holds of `id`: its events' and its snapshots' sequence numbers.
    static func held(_ id: String, _ journal: any BrowsableJournal) async throws -> (events: [UInt64], snapshots: [UInt64]) {
        (try await journal.events(loop: id, after: 0, limit: 10_000).map(\.sequence), try await journal.snapshots(loop: id).map(\.sequence))
    }

    /// With a retention policy, a snapshot append deletes the snapshots older than the newest N
    /// and the events before the oldest of them (nothing while there are fewer than N); a
    /// restarted loop recovers the same state and goes on, and the replay check replays from the
    /// oldest kept snapshot.
    @Sendable
    public static func retention(_ environment: DurabilityEnvironment) async throws {
        let id = loopID("retention")
        let retention = JournalRetention(keepingSnapshots: 2)
        let configuration = DurableConfiguration(snapshotEvery: 3)
        let loop = try await open(id, try await journal(environment, retention), environment, configuration: configuration)
        let events = (1...14).map { Ledger.Event.add($0) }
        for event in events.prefix(5) { try await loop.sendAndWait(event) }
        var held = try await held(id, try await journal(environment, nil))
        try require(held.events == Array(1...5) && held.snapshots == [3], "with one snapshot of two, the journal holds \(held)")
        for event in events.dropFirst(5) { try await loop.sendAndWait(event) }
        await loop.stop()
        held = try await Self.held(id, try await journal(environment, nil))
        try require(
            held.events == Array(9...14) && held.snapshots == [9, 12],
            "keeping 2 snapshots of 3, 6, 9, 12, the journal holds \(held), not events 9...14 and snapshots 9, 12")

        let recovered = try await open(id, try await journal(environment, retention), environment, configuration: configuration)
        try require(recovered.state == fold(events) && recovered.recoveredSequence == 14, "recovered \(recovered.state) at \(recovered.recoveredSequence)")
        let state = try await recovered.sendAndWait(.add(15))
        try require(state == fold(events + [.add(15)]) && recovered.sequence == 15, "after recovery: \(state) at \(recovered.sequence)")
        await recovered.stop()

        // The snapshot at 15 pruned again: events 12...15, snapshots 12 and 15.
        let report = try await JournalReplayCheck(initial: Ledger.State(), reduce: Ledger.reduce)
            .report(journal: try await journal(environment, nil), loops: [id])
        let checked = report.loops[0]
        try require(
            checked.passed && checked.prunedThrough == 11 && checked.events == 4 && checked.snapshots == 1,
            "the replay check of the pruned journal: \(report) (pruned through \(String(describing: checked.prunedThrough)))")
    }

    /// Pruning is part of the fenced append: an owner deposed by another deletes nothing.
    @Sendable
    public static func deposedOwnerPrunesNothing(_ environment: DurabilityEnvironment) async throws {
        let id = loopID("prunesNothing")
        let owner = try await open(
            id, try await journal(environment, JournalRetention(keepingSnapshots: 1)), environment,
            configuration: DurableConfiguration(snapshotEvery: 2))
        for amount in 1...3 { try await owner.sendAndWait(.add(amount)) }
        var held = try await held(id, try await journal(environment, nil))
        try require(held.events == [2, 3] && held.snapshots == [2], "before the takeover, the journal holds \(held)")
        try await environment.depose(id)
        do {
            try await owner.sendAndWait(.add(4))
            throw DurabilityCheckFailure("a deposed owner's append was accepted")
        } catch JournalError.fenced {}
        held = try await Self.held(id, try await journal(environment, nil))
        try require(held.events == [2, 3] && held.snapshots == [2], "after the deposed owner's snapshot append, the journal holds \(held)")
        await owner.stop()
    }

    /// Turning retention on for a long journal deletes at most `maximumEventsPrunedPerAppend`
    /// events per snapshot append, and the journal stays recoverable, and checkable, at each step.
    @Sendable
    public static func pruningIsBounded(_ environment: DurabilityEnvironment) async throws {
        let id = loopID("bounded")
        let configuration = DurableConfiguration(snapshotEvery: 5)
        let events = (1...30).map { Ledger.Event.add($0) }
        let unpruned = try await open(id, try await journal(environment, nil), environment, configuration: configuration)
        for event in events.prefix(20) { try await unpruned.sendAndWait(event) }
        await unpruned.stop()
        var held = try await held(id, try await journal(environment, nil))
        try require(held.events == Array(1...20) && held.snapshots.last == 20, "without retention, the journal holds \(held)")

        let retention = JournalRetention(keepingSnapshots: 1, maximumEventsPrunedPerAppend: 4)
        for (end, firstKept) in [(25, 5), (30, 9)] as [(Int, UInt64)] {
            let loop = try await open(id, try await journal(environment, retention), environment, configuration: configuration)
            try require(loop.state == fold(Array(events.prefix(end - 5))), "recovered \(loop.state) before event \(end - 4)")
            for event in events[(end - 5)..<end] { try await loop.sendAndWait(event) }
            await loop.stop()
            held = try await Self.held(id, try await journal(environment, nil))
            try require(
                held.events == Array(firstKept...UInt64(end)) && held.snapshots == [UInt64(end)],
                "after the snapshot at \(end), pruning at most 4 events, the journal holds \(held)")
            let report = try await JournalReplayCheck(initial: Ledger.State(), reduce: Ledger.reduce)
                .report(journal: try await journal(environment, nil), loops: [id])
            try require(report.passed && report.loops[0].prunedThrough == firstKept - 1, "the replay check: \(report)")
        }
    }
}

extension DurabilityChecks {
    /// An archive that records what it is handed, and throws while `failing` is set.
    final class RecordingArchive: Sendable {
        let batches = Probe<(loop: String, events: [JournalRecord])>()
        let failing: Lock<Bool>

        init(failing: Bool = false) { self.failing = Lock(failing) }

        var archive: JournalArchive {
            JournalArchive { [self] loop, events in
                if failing.withLock({ $0 }) { throw DurabilityCheckFailure("the archive is down") }
                batches.record((loop, events))
            }
        }
    }

    /// The record the journal wrote for `event` at `sequence`.
    static func journaled(_ event: Ledger.Event, at sequence: UInt64) throws -> JournalRecord {
        JournalRecord(sequence: sequence, schemaVersion: 1, payload: Array(try JSONEncoder().encode(event)))
    }

    /// With an archive, every event retention deletes is handed to it first, exactly as
    /// journaled, oldest first and once each, and nothing it was not handed is deleted.
    @Sendable
    public static func archive(_ environment: DurabilityEnvironment) async throws {
        let id = loopID("archive")
        let archive = RecordingArchive()
        let retention = JournalRetention(keepingSnapshots: 2, archive: archive.archive)
        let loop = try await open(id, try await journal(environment, retention), environment, configuration: DurableConfiguration(snapshotEvery: 3))
        let events = (1...14).map { Ledger.Event.add($0) }
        for event in events { try await loop.sendAndWait(event) }
        await loop.stop()

        let held = try await held(id, try await journal(environment, nil))
        try require(held.events == Array(9...14) && held.snapshots == [9, 12], "keeping 2 snapshots of 3, 6, 9, 12, the journal holds \(held)")
        let batches = archive.batches.entries
        try require(batches.allSatisfy { $0.loop == id }, "archived for loops \(batches.map(\.loop)), not only \(id)")
        // Pruned at the snapshots at 6 (events before 3), 9 (before 6) and 12 (before 9).
        try require(
            batches.map { $0.events.map(\.sequence) } == [[1, 2], [3, 4, 5], [6, 7, 8]],
            "archived batches \(batches.map { $0.events.map(\.sequence) }), not [1, 2], [3, 4, 5], [6, 7, 8]")
        let archived = batches.flatMap(\.events)
        let expected = try events.prefix(8).enumerated().map { try journaled($1, at: UInt64($0 + 1)) }
        try require(archived == expected, "the archive was handed records other than the journaled ones: \(archived)")

        // An append whose own events its prune deletes (a batch across the snapshot, keeping 1)
        // hands those too.
        let batch = loopID("archiveBatch")
        let single = RecordingArchive()
        let keepingOne = try await journal(environment, JournalRetention(keepingSnapshots: 1, archive: single.archive))
        let epoch = try await keepingOne.acquire(loop: batch)
        let records = try (1...4).map { try journaled(.add($0), at: UInt64($0)) }
        try await keepingOne.append(
            loop: batch, epoch: epoch, events: records, snapshot: JournalRecord(sequence: 3, schemaVersion: 1, payload: Array(try JSONEncoder().encode(fold((1...3).map { .add($0) })))))
        try await keepingOne.release(loop: batch, epoch: epoch)
        let kept = try await Self.held(batch, try await journal(environment, nil))
        try require(kept.events == [3, 4] && kept.snapshots == [3], "after a batch across the snapshot at 3, the journal holds \(kept)")
        try require(
            single.batches.entries.map(\.events) == [Array(records.prefix(2))],
            "the batch's prune archived \(single.batches.entries.map { $0.events.map(\.sequence) }), not [1, 2]")
    }

    /// An archive that throws fails the append that needed it, naming the loop and the events:
    /// nothing of that append is written, nothing is deleted, and the loop stops; a restarted
    /// loop recovers every event journaled before, and its next snapshot hands the archive the
    /// same events.
    @Sendable
    public static func failedArchiveDeletesNothing(_ environment: DurabilityEnvironment) async throws {
        let id = loopID("failedArchive")
        let archive = RecordingArchive(failing: true)
        let retention = JournalRetention(keepingSnapshots: 1, archive: archive.archive)
        let configuration = DurableConfiguration(snapshotEvery: 2)
        // One handle for both owners: a failed loop keeps its lease (a leased store), which the
        // same node takes back at once, as a server restarting its loop does.
        let store = try await journal(environment, retention)
        let loop = try await open(id, store, environment, configuration: configuration)
        try await loop.sendAndWait(.add(1))
        // The snapshot at 2 prunes event 1, which needs the archive.
        do {
            try await loop.sendAndWait(.add(2))
            throw DurabilityCheckFailure("the append went through with the archive down")
        } catch JournalError.archiveFailed(let loop, let events, let reason) {
            try require(
                loop == id && events == 1...1 && reason.contains("the archive is down"),
                "archiveFailed(loop: \(loop), events: \(events), reason: \(reason))")
        }
        await loop.waitUntilStopped()
        try require(loop.failure is JournalError, "failure: \(String(describing: loop.failure))")
        await loop.stop()
        var held = try await held(id, try await journal(environment, nil))
        try require(held.events == [1] && held.snapshots.isEmpty, "after the failed archive, the journal holds \(held)")
        try require(archive.batches.entries.isEmpty, "the archive recorded \(archive.batches.entries.count) batches while down")

        archive.failing.withLock { $0 = false }
        let recovered = try await open(id, store, environment, configuration: configuration)
        try require(recovered.state == fold([.add(1)]) && recovered.recoveredSequence == 1, "recovered \(recovered.state) at \(recovered.recoveredSequence)")
        for amount in 2...6 { try await recovered.sendAndWait(.add(amount)) }
        await recovered.stop()
        held = try await Self.held(id, try await journal(environment, nil))
        try require(held.events == [6] && held.snapshots == [6], "after the archive came back, the journal holds \(held)")
        try require(
            archive.batches.entries.map { $0.events.map(\.sequence) } == [[1], [2, 3], [4, 5]],
            "archived \(archive.batches.entries.map { $0.events.map(\.sequence) }), not [1], [2, 3], [4, 5]")
    }
}

/// Records where each page of a recovery starts.
final class ReadCountingJournal: EventJournal {
    let base: any EventJournal
    let reads = Probe<UInt64>()

    init(_ base: any EventJournal) { self.base = base }

    func acquire(loop: String) async throws -> UInt64 { try await base.acquire(loop: loop) }
    func acquire(loop: String, feature: String) async throws -> UInt64 { try await base.acquire(loop: loop, feature: feature) }
    func release(loop: String, epoch: UInt64) async throws { try await base.release(loop: loop, epoch: epoch) }
    func latestSnapshot(loop: String) async throws -> JournalRecord? { try await base.latestSnapshot(loop: loop) }
    func events(loop: String, after sequence: UInt64, limit: Int) async throws -> [JournalRecord] {
        reads.record(sequence)
        return try await base.events(loop: loop, after: sequence, limit: limit)
    }
    func append(loop: String, epoch: UInt64, events: [JournalRecord], snapshot: JournalRecord?) async throws {
        try await base.append(loop: loop, epoch: epoch, events: events, snapshot: snapshot)
    }
}
#endif
