#if Durable
import FeedbackLoop
import Foundation
import Instrumentation
import Logging

/// The inner loop's state: the feature's state and the sequence number of the last journaled
/// event reduced into it.
@usableFromInline
struct Applied<State: Sendable>: Sendable {
    @usableFromInline var state: State
    @usableFromInline var sequence: UInt64

    @inlinable
    init(state: State, sequence: UInt64) {
        self.state = state
        self.sequence = sequence
    }
}

/// The inner loop's events: a journaled event to reduce, or an event an effect sent, to journal.
///
/// Effects send `proposed` into the inner loop rather than into the journal directly so that
/// the loop's own rules decide whether an effect may still speak: an event from a cancelled or
/// finished effect is dropped there and counted, exactly as in a plain `Loop`. `liveness` tells
/// later whether that effect may still change state (see ``Journaler``).
@usableFromInline
enum Envelope<Event: Sendable>: Sendable {
    case committed(Event, sequence: UInt64)
    /// `context`: the effect's, so that the event keeps it through the journal (see
    /// ``Journaler/Pending/context``).
    case proposed(Event, liveness: EffectLiveness, context: ServiceContext?)
}

/// The durable intake every event passes through — external sends and effects' events alike —
/// and the committer task that journals them in batches before the inner loop reduces them.
///
/// Only the committer task appends and sends `committed` events, one batch after the other, so
/// the journal's order is the reducer's order. Nothing is resumed under the lock.
///
/// ## An effect's event and the events ahead of it
/// The inner loop accepts an effect's event when its effect is live in the state reduced *so
/// far*; events already queued, or in a transaction, or journaled but not yet reduced, may still
/// cancel that effect when their turn comes, and a plain `Loop` would then drop the event. So an
/// effect's event (a *proposal*) enters a transaction only once every event ahead of it has been
/// reduced, and is checked again right before: if the effect that sent it was cancelled since
/// the inner loop accepted it (the loop would now drop its event), it is dropped and counted
/// (``Guarded/droppedProposals``), never journaled. A proposal therefore starts a transaction of
/// its own (external events behind it may join that transaction).
@usableFromInline
final class Journaler<State: Codable & Sendable, Event: Codable & Sendable>: Sendable {
    @usableFromInline
    struct Pending: Sendable {
        @usableFromInline var event: Event
        @usableFromInline var payload: [UInt8]
        @usableFromInline var waiter: CheckedContinuation<State, any Error>?
        /// For an effect's event: whether that effect may still change state.
        @usableFromInline var proposal: EffectLiveness?
        /// The sender's `ServiceContext` (an effect's, for its events): the event carries it into
        /// the inner loop once journaled, if that loop propagates contexts. (Read on every send:
        /// a task-local read, beside the encoding and the journal write each event pays.)
        @usableFromInline var context: ServiceContext?

        @inlinable
        init(
            event: Event, payload: [UInt8], waiter: CheckedContinuation<State, any Error>?,
            proposal: EffectLiveness? = nil, context: ServiceContext?
        ) {
            self.event = event
            self.payload = payload
            self.waiter = waiter
            self.proposal = proposal
            self.context = context
        }
    }

    /// What the committer waits for.
    @usableFromInline
    enum Wait {
        /// An event to journal.
        case event
        /// The inner loop reducing up to this sequence number, so that the proposal at the front
        /// can be checked.
        case applied(UInt64)
    }

    /// What the committer does next.
    @usableFromInline
    enum Next {
        case batch([Pending])
        case park(Wait)
        case stop
    }

    @usableFromInline
    struct Guarded: Sendable {
        /// The events not yet in a transaction: `pending[taken...]`. Batches are taken from the
        /// front by moving `taken` rather than by moving every event behind them down (a sender
        /// that outpaces the disk leaves tens of thousands behind each batch); the taken ones go
        /// once they are half the array.
        @usableFromInline var pending: [Pending] = []
        @usableFromInline var taken = 0
        /// The committer, parked until there is work (or, with ``wakeAtApplied``, until the inner
        /// loop has reduced that far) or a stop.
        @usableFromInline var wake: CheckedContinuation<Void, Never>?
        @usableFromInline var wakeAtApplied: UInt64?
        @usableFromInline var isStopping = false
        /// `sendAndWait` callers whose events are journaled, by sequence number, until the inner
        /// loop reduces them.
        @usableFromInline var waiters: [UInt64: CheckedContinuation<State, any Error>] = [:]
        @usableFromInline var failure: (any Error)?
        /// The inner loop's latest state, set before the `sendAndWait` it answers resumes and
        /// before the caller's own observers run, so that ``DurableLoop/state`` is never older
        /// than a state a caller was given or shown. The cost: holding every state makes the next
        /// reduce copy the state's heap storage (arrays, dictionaries) once per event rather than
        /// once per batch, as the inner loop's publish does.
        @usableFromInline var latest: Applied<State>
        /// Effects' events dropped here because their effect was cancelled after the inner loop
        /// accepted them.
        @usableFromInline var droppedProposals = 0

        @inlinable
        init(latest: Applied<State>) {
            self.latest = latest
        }

        /// What the committer must wait for before ``next(head:limit:dropped:)`` has a batch.
        @inlinable
        func parking(head: UInt64) -> Wait? {
            if isStopping { return nil }
            guard taken < pending.count else { return .event }
            if pending[taken].proposal != nil, latest.sequence < head { return .applied(head) }
            return nil
        }

        /// The next batch for a journal whose head is `head`: external events up to `limit`, or
        /// a proposal (re-checked once everything ahead of it is reduced) and the external
        /// events behind it. Drops the proposals whose effect was cancelled since.
        @inlinable
        mutating func next(head: UInt64, limit: Int, dropped: inout [Event]) -> Next {
            while true {
                if isStopping { return .stop }
                if let wait = parking(head: head) { return .park(wait) }
                var count = 0
                if let proposal = pending[taken].proposal {
                    if Journaler.silenced(proposal) {
                        dropped.append(pending[taken].event)
                        droppedProposals += 1
                        dropFront(1)
                        continue
                    }
                    count = 1
                }
                let available = min(limit, pending.count - taken)
                while count < available, pending[taken + count].proposal == nil { count += 1 }
                if taken == 0, count == pending.count {
                    defer { pending = [] }
                    return .batch(pending)
                }
                defer { dropFront(count) }
                return .batch(Array(pending[taken..<taken + count]))
            }
        }

        /// Takes the first `count` pending events out of ``pending``.
        @inlinable
        mutating func dropFront(_ count: Int) {
            taken += count
            if taken == pending.count {
                pending = []
                taken = 0
            } else if taken >= pending.count / 2 {
                pending.removeFirst(taken)
                taken = 0
            }
        }

        /// Takes every pending event out of ``pending``.
        @inlinable
        mutating func takeAll() -> ArraySlice<Pending> {
            defer {
                pending = []
                taken = 0
            }
            return pending[taken...]
        }
    }

    /// Whether an effect's event must be dropped: its effect was cancelled or ended. Not
    /// inlinable: `isSilenced` is the engine's package API.
    @usableFromInline
    static func silenced(_ liveness: EffectLiveness) -> Bool {
        liveness.isSilenced
    }

    @usableFromInline let loopID: String
    @usableFromInline let journal: any EventJournal
    @usableFromInline let epoch: UInt64
    @usableFromInline let reduce: @Sendable (inout State, Event) -> Void
    @usableFromInline let configuration: DurableConfiguration
    @usableFromInline let guarded: Lock<Guarded>
    /// Events' and snapshots' encoder: JSON as `JSONEncoder` writes it, for `JSONDecoder` at
    /// recovery.
    @usableFromInline let encoder = JournalEncoder()

    @usableFromInline
    init(
        loopID: String, journal: any EventJournal, epoch: UInt64,
        reduce: @escaping @Sendable (inout State, Event) -> Void, configuration: DurableConfiguration,
        recovered: Applied<State>
    ) {
        self.guarded = Lock(Guarded(latest: recovered))
        self.loopID = loopID
        self.journal = journal
        self.epoch = epoch
        self.reduce = reduce
        self.configuration = configuration
    }

    @inlinable
    func encode(_ event: Event) throws(DurableLoopError) -> [UInt8] {
        do {
            return try encoder.encode(event)
        } catch {
            throw .unencodableEvent(loop: loopID, reason: String(describing: error))
        }
    }

    /// Queues an encoded event for the next batch. Returns the error to give the sender when the
    /// loop is stopping.
    @inlinable
    func enqueue(_ pending: Pending) -> DurableLoopError? {
        let (wake, refused) = guarded.withLock { guarded -> (CheckedContinuation<Void, Never>?, Bool) in
            if guarded.isStopping { return (nil, true) }
            guarded.pending.append(pending)
            // A committer waiting for the inner loop to catch up has work already.
            guard guarded.wakeAtApplied == nil else { return (nil, false) }
            let wake = guarded.wake
            guarded.wake = nil
            return (wake, false)
        }
        wake?.resume()
        return refused ? .stopped(loop: loopID) : nil
    }

    /// An effect's event, accepted by the inner loop: journal it once the events ahead of it are
    /// reduced, unless its effect is cancelled meanwhile (`liveness`).
    @inlinable
    func propose(_ event: Event, liveness: EffectLiveness, context: ServiceContext?) {
        let payload: [UInt8]
        do {
            payload = try encode(event)
        } catch {
            configuration.logger.error("\(error); an effect's event was dropped")
            return
        }
        _ = enqueue(Pending(event: event, payload: payload, waiter: nil, proposal: liveness, context: context))
    }

    /// The inner loop reduced up to `applied.sequence`: answer that event's `sendAndWait`, and
    /// wake the committer if it waits for the inner loop to get this far.
    @inlinable
    func reduced(_ applied: Applied<State>) {
        let (waiter, wake) = guarded.withLock { guarded in
            guarded.latest = applied
            var wake: CheckedContinuation<Void, Never>?
            if let target = guarded.wakeAtApplied, applied.sequence >= target {
                wake = guarded.wake
                guarded.wake = nil
                guarded.wakeAtApplied = nil
            }
            return (guarded.waiters.isEmpty ? nil : guarded.waiters.removeValue(forKey: applied.sequence), wake)
        }
        waiter?.resume(returning: applied.state)
        wake?.resume()
    }

    /// Refuses every later event, discards the ones not yet in a transaction (their senders get
    /// `error`) and lets the committer end after the transaction it is in.
    @usableFromInline
    func beginStop(_ error: any Error) {
        let (wake, discarded) = guarded.withLock { guarded -> (CheckedContinuation<Void, Never>?, ArraySlice<Pending>) in
            guard !guarded.isStopping else { return (nil, []) }
            guarded.isStopping = true
            let discarded = guarded.takeAll()
            let wake = guarded.wake
            guarded.wake = nil
            guarded.wakeAtApplied = nil
            return (wake, discarded)
        }
        wake?.resume()
        for pending in discarded { pending.waiter?.resume(throwing: error) }
    }

    /// Fails the `sendAndWait` callers whose events were journaled but never reduced.
    @usableFromInline
    func failWaiters(_ error: any Error) {
        let waiters = guarded.withLock { guarded in
            let waiters = guarded.waiters
            guarded.waiters = [:]
            return waiters
        }
        for waiter in waiters.values { waiter.resume(throwing: error) }
    }

    var failure: (any Error)? {
        guarded.withLock { $0.failure }
    }

    /// The next batch for a journal whose head is `head`, or `nil` once stopping. Before it
    /// parks, it calls `handOver`, which gives the inner loop the events journaled and not yet
    /// handed to it and says whether there were any: the inner loop must have them to catch up
    /// (a proposal at the front waits for it), and they must not wait for the next event.
    @inlinable
    func nextBatch(head: UInt64, handOver: () -> Bool) async -> [Pending]? {
        let limit = configuration.maximumBatch
        while true {
            var dropped: [Event] = []
            let next = guarded.withLock { $0.next(head: head, limit: limit, dropped: &dropped) }
            for event in dropped {
                configuration.logger.debug(
                    "durable loop '\(loopID)': an effect's event was dropped, its effect was cancelled before its turn: \(event)")
            }
            switch next {
            case .batch(let batch): return batch
            case .stop: return nil
            case .park:
                if handOver() { continue }
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let parked = guarded.withLock { guarded in
                        guard let wait = guarded.parking(head: head) else { return false }
                        guarded.wake = continuation
                        if case .applied(let sequence) = wait { guarded.wakeAtApplied = sequence }
                        return true
                    }
                    if !parked { continuation.resume() }
                }
            }
        }
    }

    /// The committer: journal a batch (with a snapshot when it reaches the interval), then hand
    /// its events to the inner loop in order. Ends when stopping, or at the first failed append,
    /// which stops the loop: a loop that cannot journal must not act. When the inner loop
    /// propagates `ServiceContext`, each event reaches it in its sender's context.
    ///
    /// A journaled batch is handed over while the next batch's append is in flight, or before
    /// the committer parks or ends: its events reach the inner loop only once journaled, and in
    /// order, while the hand-over overlaps the next transaction's `fsync`. The hand-over is one
    /// ``Loop/send(contentsOf:)``: on the `actor` and `stream` backends a `send` per event woke
    /// an inner loop that keeps pace for each of them.
    @inlinable
    func commit(
        into loop: Loop<Applied<State>, Envelope<Event>>, recovered: State, head: UInt64
    ) async {
        let propagates = loop.propagatesServiceContext
        var head = head
        // The state as of the journal's head, for snapshots; kept only when they are written.
        var shadow: State? = configuration.snapshotEvery == nil ? nil : recovered
        let schemaVersion = configuration.schemaVersion
        // The batch journaled last, numbered from `first`, until it is handed over.
        var journaled: (batch: [Pending], first: UInt64)?
        // The loops below run once per event in code that is generic over `State` and `Event`
        // and, called from another module, not specialised: each copy of a `Pending` and each
        // generic iterator costs a metadata lookup. So they walk indices, borrow the elements in
        // place, and skip the waiters' pass (and its lock) for a batch of plain `send`s.
        func handOver() -> Bool {
            guard let (batch, first) = journaled else { return false }
            journaled = nil
            if propagates {
                // One `send` per event, each in its own sender's context, or none: never the
                // context of whoever created this loop, which the committer task inherited. A
                // batch send would give every event one context.
                for index in batch.indices {
                    let committed = Envelope.committed(batch[index].event, sequence: first + UInt64(index))
                    ServiceContext.$current.withValue(batch[index].context) { loop.send(committed) }
                }
                return true
            }
            var committed: [Envelope<Event>] = []
            committed.reserveCapacity(batch.count)
            for index in batch.indices {
                committed.append(.committed(batch[index].event, sequence: first + UInt64(index)))
            }
            // One lock and at most one wake-up of the inner loop for the batch, in order.
            loop.send(contentsOf: committed)
            return true
        }
        while let batch = await nextBatch(head: head, handOver: handOver) {
            var records: [JournalRecord] = []
            records.reserveCapacity(batch.count)
            var hasWaiter = false
            for index in batch.indices {
                records.append(JournalRecord(
                    sequence: head + UInt64(index) + 1, schemaVersion: schemaVersion, payload: batch[index].payload))
                if shadow != nil { reduce(&shadow!, batch[index].event) }
                if batch[index].waiter != nil { hasWaiter = true }
            }
            let last = head + UInt64(batch.count)
            var snapshot: JournalRecord?
            if let every = configuration.snapshotEvery.map(UInt64.init), let shadow, head / every != last / every {
                do {
                    snapshot = JournalRecord(
                        sequence: last, schemaVersion: configuration.schemaVersion,
                        payload: try encoder.encode(shadow))
                } catch {
                    configuration.logger.error("durable loop '\(loopID)': the state cannot be encoded, no snapshot at \(last): \(error)")
                }
            }
            do {
                let (records, snapshot) = (records, snapshot)
                async let appended: Void = journal.append(loop: loopID, epoch: epoch, events: records, snapshot: snapshot)
                _ = handOver()
                try await appended
            } catch {
                configuration.logger.error("durable loop '\(loopID)' stops: the journal refused events \(head + 1)...\(last): \(error)")
                guarded.withLock { $0.failure = $0.failure ?? error }
                for pending in batch { pending.waiter?.resume(throwing: error) }
                beginStop(error)
                await loop.stop()
                failWaiters(error)
                return
            }
            if hasWaiter {
                guarded.withLock { guarded in
                    for index in batch.indices {
                        if let waiter = batch[index].waiter { guarded.waiters[head + UInt64(index) + 1] = waiter }
                    }
                }
            }
            journaled = (batch, head + 1)
            head = last
        }
        _ = handOver()
    }
}
#endif
