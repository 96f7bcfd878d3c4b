#if Durable
import FeedbackLoop
import Foundation
import Instrumentation
import Logging

/// A `Loop` whose events are journaled before they act, and that recovers from its
/// journal after a restart.
///
/// ```swift
/// let journal = try SQLiteJournal(path: "orders.sqlite")
/// let orders = try await DurableLoop(
///     id: "customer-42", journal: journal,
///     initial: Orders.State(), reduce: Orders.reduce,
///     feedbacks: { context in Orders.feedbacks(context) })
/// let state = try await orders.sendAndWait(.place("espresso"))   // journaled, then reduced
/// await orders.stop()
/// ```
///
/// ## Persist first, then act
/// Every event — sent from outside or by an effect — is committed to the journal with a dense
/// sequence number (1, 2, 3, … per loop) before the reducer sees it, so before any effect it
/// starts and before ``sendAndWait(_:)`` answers. Events that wait together are committed in
/// one transaction (group commit: one `fsync` for a whole batch). Every
/// ``DurableConfiguration/snapshotEvery`` events a snapshot of the state is written in the same
/// transaction.
///
/// ## Recovery
/// Creating a durable loop takes ownership of its journal (``EventJournal/acquire(loop:feature:)``,
/// which also checks that no other feature journaled the same id) and rebuilds the state from
/// the latest snapshot plus the journal's tail, through the same reducer. The feedbacks then see the recovered state as a fresh loop's feedbacks see its
/// initial state: they start exactly the effects that state asks for. An effect that was running
/// when the process died therefore runs again: effects are **at least once** across a crash.
/// Give them an ``IdempotencyKey`` (``DurableContext/idempotencyKey(feedback:query:)``) to pass
/// downstream.
///
/// A record that cannot be decoded stops recovery with
/// ``DurableLoopError/undecodableEvent(loop:sequence:reason:)``, naming the loop and the
/// sequence number: an event is never skipped.
///
/// ## Effects' events
/// A durable loop keeps a plain `Loop`'s promise: once an effect is cancelled (its query changed
/// or went away), nothing it sent changes the state, recovered or not. An effect's event goes
/// through the inner loop first, which drops it if the effect has been cancelled or has ended;
/// an accepted one waits until every event ahead of it has been journaled and reduced — those
/// events may cancel its effect — and is checked again right before its own transaction. One
/// whose effect was cancelled meanwhile is dropped and counted in
/// ``eventsDroppedFromCancelledEffects``, never journaled; its siblings (other requests of a
/// `requests` feedback, other children's effects) are judged each on its own. So the journal
/// holds exactly the events the reducer saw, and replaying it gives the same state.
///
/// The price: an effect's event starts a transaction of its own, after the transaction ahead
/// of it is reduced (external events behind it join that transaction).
///
/// ## Stopping
/// ``stop()`` refuses new events (``DurableLoopError/stopped(loop:)``), discards the ones not yet
/// in a transaction (their `sendAndWait` callers get the same error), waits for the transaction in
/// flight, stops the inner loop (cancelling every effect) and gives up ownership. A failed append
/// — a deposed owner fenced off, a lost lease, a full disk — stops the loop the same way, since a
/// loop that cannot journal must not act; ``failure`` then says why.
public final class DurableLoop<State: Codable & Sendable, Event: Codable & Sendable>: Sendable {
    /// The loop's id: its journal's key.
    public let id: String
    /// The ownership epoch this run holds.
    public let epoch: UInt64
    /// The sequence number of the last journaled event when recovery ended (0 for a new loop).
    public let recoveredSequence: UInt64

    @usableFromInline let loop: Loop<Applied<State>, Envelope<Event>>
    @usableFromInline let journaler: Journaler<State, Event>
    @usableFromInline let committer: Task<Void, Never>
    @usableFromInline let waiterObservation: Observation

    /// Takes ownership of the loop `id` in `journal`, recovers its state and starts it.
    ///
    /// - Parameters:
    ///   - id: The loop's key in the journal.
    ///   - journal: Where its events live: ``SQLiteJournal``, or another ``EventJournal``.
    ///   - initial: The state of a loop whose journal is empty; recovery starts from it.
    ///   - reduce: The reducer; it must be pure and deterministic, since recovery runs it again on
    ///     the journaled events.
    ///   - feedbacks: The feedbacks, built once with the run's ``DurableContext``.
    ///   - backend: The engine of the inner loop.
    ///   - configuration: Snapshots, schema version, batch size, logger.
    ///   - loopConfiguration: The inner loop's configuration (logging, metrics, instruments). Its
    ///     `capacity` is not applied: every journaled event must be reduced, so the inner loop's
    ///     queue is unbounded whatever it says.
    /// - Throws: the journal's errors (``JournalError/ownedElsewhere(loop:)`` among them);
    ///   ``DurableLoopError/featureMismatch(loop:journaled:opening:)`` when another feature
    ///   journaled `id` (see ``DurableConfiguration/feature``);
    ///   ``DurableLoopError/damagedJournal(loop:sequence:reason:)`` when the store's file is
    ///   damaged; ``DurableLoopError/undecodableEvent(loop:sequence:reason:)``,
    ///   ``DurableLoopError/undecodableSnapshot(loop:sequence:reason:)``,
    ///   ``DurableLoopError/unsupportedSchemaVersion(loop:sequence:found:supported:)``,
    ///   ``DurableLoopError/journalGap(loop:expected:found:)`` or
    ///   ``DurableLoopError/snapshotAheadOfEvents(loop:sequence:)`` when the journal cannot be
    ///   replayed; ``JournalError/malformedValue(loop:sequence:column:found:)`` for a row another
    ///   tool altered.
    // Inlinable, with the committer and the sender's path, so that they are specialised for the
    // caller's `State` and `Event`: unspecialised, every event looked up type metadata.
    @inlinable
    public init(
        id: String,
        journal: some EventJournal,
        initial: State,
        reduce: @escaping @Sendable (inout State, Event) -> Void,
        feedbacks: (DurableContext) -> [Feedback<State, Event>] = { _ in [] },
        backend: Backend = .callback,
        configuration: DurableConfiguration = DurableConfiguration(),
        loopConfiguration: LoopConfiguration = LoopConfiguration()
    ) async throws {
        let epoch = try await journal.acquire(loop: id, feature: configuration.featureName(state: State.self, event: Event.self))
        let recovered: (state: State, sequence: UInt64)
        do {
            recovered = try await Self.recover(
                id: id, journal: journal, initial: initial, reduce: reduce, configuration: configuration)
        } catch {
            try? await journal.release(loop: id, epoch: epoch)
            throw error
        }
        configuration.logger.debug("durable loop '\(id)' recovered at event \(recovered.sequence), epoch \(epoch)")

        let journaler = Journaler<State, Event>(
            loopID: id, journal: journal, epoch: epoch, reduce: reduce, configuration: configuration,
            recovered: Applied(state: recovered.state, sequence: recovered.sequence))
        let context = DurableContext(loopID: id, epoch: epoch)
        let scope = Self.scope()
        let loop = Loop<Applied<State>, Envelope<Event>>(
            initial: Applied(state: recovered.state, sequence: recovered.sequence),
            reduce: { applied, envelope in
                guard case .committed(let event, let sequence) = envelope else { return }
                reduce(&applied.state, event)
                applied.sequence = sequence
            },
            feedbacks: Self.inner(feedbacks(context), scope: scope, journaler: journaler),
            backend: backend,
            configuration: Self.unbounded(loopConfiguration))
        self.id = id
        self.epoch = epoch
        self.recoveredSequence = recovered.sequence
        self.loop = loop
        self.journaler = journaler
        self.waiterObservation = loop.observe { journaler.reduced($0) }
        self.committer = Task { [recovered] in
            await journaler.commit(into: loop, recovered: recovered.state, head: recovered.sequence)
        }
    }

    deinit {
        journaler.beginStop(DurableLoopError.stopped(loop: id))
    }

    /// Queues `event` to be journaled and then reduced. Returns at once.
    ///
    /// Events are journaled and reduced in the order their `send` or ``sendAndWait(_:)`` calls
    /// returned. An event that was queued but not yet in a transaction when the loop stopped is
    /// discarded.
    ///
    /// When the loop propagates `ServiceContext` (`loopConfiguration.serviceContext`, see
    /// `ServiceContextPropagation`), the caller's context travels with the event through the
    /// journal write, and the effects the event causes run in it, as in a plain `Loop`; so do the
    /// events those effects send (read in the effect's task: a `.callback` effect's sink called
    /// from another thread gives its event that thread's context). The context is not journaled:
    /// a recovered loop reduces recovered events in none.
    ///
    /// - Throws: ``DurableLoopError/stopped(loop:)`` once the loop is stopping;
    ///   ``DurableLoopError/unencodableEvent(loop:reason:)`` when `event` cannot be encoded.
    @inlinable
    public func send(_ event: Event) throws(DurableLoopError) {
        let payload = try journaler.encode(event)
        let pending = Journaler<State, Event>.Pending(
            event: event, payload: payload, waiter: nil, context: ServiceContext.current)
        if let refused = journaler.enqueue(pending) { throw refused }
    }

    /// Journals `event`, reduces it, and returns the state right after the reducer ran on it.
    ///
    /// When it returns, the event is durable: a loop recovered from the journal includes it.
    /// Once queued, the event is journaled even if the calling task is cancelled.
    ///
    /// - Throws: ``DurableLoopError/stopped(loop:)`` if the loop stopped before the event was
    ///   reduced (it may still have been journaled, and then a recovered loop reduces it);
    ///   ``DurableLoopError/unencodableEvent(loop:reason:)``; the journal's error when the
    ///   append failed (the loop then stops).
    @discardableResult
    @inlinable
    public func sendAndWait(_ event: Event) async throws -> State {
        let payload = try journaler.encode(event)
        let context = ServiceContext.current
        return try await withCheckedThrowingContinuation { continuation in
            let pending = Journaler<State, Event>.Pending(
                event: event, payload: payload, waiter: continuation, context: context)
            if let refused = journaler.enqueue(pending) {
                continuation.resume(throwing: refused)
            }
        }
    }

    /// The state after the latest reduced event: never older than a state ``sendAndWait(_:)``
    /// returned. Safe to read from any thread.
    public var state: State {
        journaler.guarded.withLock { $0.latest.state }
    }

    /// The sequence number of the last event reduced into ``state``.
    public var sequence: UInt64 {
        journaler.guarded.withLock { $0.latest.sequence }
    }

    /// Effects' events that were not journaled because their effect was cancelled or had ended
    /// before their turn; see "Effects' events" above. They never changed the state.
    public var eventsDroppedFromCancelledEffects: Int {
        loop.statistics.eventsDroppedFromCancelledEffects + journaler.guarded.withLock { $0.droppedProposals }
    }

    /// Whether the loop still takes events: `false` once a stop began, requested or not.
    public var isRunning: Bool {
        !journaler.guarded.withLock { $0.isStopping }
    }

    /// The error that stopped the loop on its own (a fenced or failed append, a lost lease), or
    /// `nil` while it runs or after a requested ``stop()``.
    public var failure: (any Error)? {
        journaler.failure
    }

    /// Calls `observer` with the current state, then with the state after every journaled event,
    /// in order, none skipped, until the returned `Observation` is cancelled or the loop stops
    /// (see `Loop.observe(_:)`).
    public func observe(_ observer: @escaping @Sendable (State) -> Void) -> Observation {
        let last = Lock<UInt64?>(nil)
        return loop.observe { applied in
            // Steps that only forwarded an effect's event to the journal leave the state alone.
            let isNew = last.withLock { last in
                defer { last = applied.sequence }
                return last != applied.sequence
            }
            if isNew { observer(applied.state) }
        }
    }

    /// Every state as an `AsyncSequence`: the current one, then the state after every journaled
    /// event, in order; it ends when the loop stops.
    public var states: DurableStates<State> {
        DurableStates(base: loop.states)
    }

    /// Returns once the loop has stopped — by ``stop()``, by a failed append or a lost lease — or
    /// when the calling task is cancelled.
    public func waitUntilStopped() async {
        for await _ in loop.states(bufferingPolicy: .bufferingNewest(1)) {}
    }

    /// Stops the loop: refuses new events, discards those not yet journaled, waits for the
    /// transaction in flight, cancels every effect and waits for them to end, then releases
    /// ownership of the journal. Idempotent.
    public func stop() async {
        journaler.beginStop(DurableLoopError.stopped(loop: id))
        await committer.value
        await loop.stop()
        journaler.failWaiters(DurableLoopError.stopped(loop: id))
        guard journaler.failure == nil else { return }
        do {
            try await journaler.journal.release(loop: id, epoch: epoch)
        } catch {
            journaler.configuration.logger.warning("durable loop '\(id)': releasing ownership failed: \(error)")
        }
    }

    /// Stops the loop because its ownership is gone — a lease that could not be renewed: like
    /// ``stop()``, but records `reason` as ``failure`` and does not release the journal, which
    /// another owner may hold by now.
    public func stop(because reason: any Error) async {
        journaler.guarded.withLock { $0.failure = $0.failure ?? reason }
        journaler.beginStop(reason)
        await committer.value
        await loop.stop()
        journaler.failWaiters(reason)
    }

    /// The inner loop's feedbacks: the feature's, scoped, and the one that hands their effects'
    /// events to the journal. A loop without feedbacks has no effects, so no proposals: it gets
    /// neither, and its events skip both on every step.
    @inlinable
    static func inner(
        _ feedbacks: [Feedback<State, Event>],
        scope: ChildScope<Applied<State>, Envelope<Event>, State, Event>,
        journaler: Journaler<State, Event>
    ) -> [Feedback<Applied<State>, Envelope<Event>>] {
        guard !feedbacks.isEmpty else { return [] }
        return [
            scope.feedback(feedbacks),
            .custom { _, envelope in
                if case .proposed(let event, let liveness, let context)? = envelope {
                    journaler.propose(event, liveness: liveness, context: context)
                }
                return .none
            },
        ]
    }

    /// The feature's place in the inner loop: its state, its committed events, and its effects'
    /// events proposed for the journal. Not inlinable: the event path's initializer is the
    /// engine's package API.
    @usableFromInline
    static func scope() -> ChildScope<Applied<State>, Envelope<Event>, State, Event> {
        ChildScope(
            state: StatePath(\Applied<State>.state),
            event: EventPath<Envelope<Event>, Event>(
                // Read in the effect: a `.run` body runs in its cause's context.
                embedFromEffect: { .proposed($0, liveness: $1, context: ServiceContext.current) },
                extract: { if case .committed(let event, _) = $0 { event } else { nil } }))
    }

    /// `configuration` with an unbounded queue: a bounded one would drop journaled events — a
    /// state that no longer matches its journal — and leave an effect's event waiting for a
    /// reduce that never comes.
    @usableFromInline
    static func unbounded(_ configuration: LoopConfiguration) -> LoopConfiguration {
        var configuration = configuration
        configuration.capacity = .unbounded
        return configuration
    }

    @usableFromInline
    static func recover(
        id: String, journal: some EventJournal, initial: State,
        reduce: (inout State, Event) -> Void, configuration: DurableConfiguration
    ) async throws -> (state: State, sequence: UInt64) {
        let decoder = JSONDecoder()
        func check(_ record: JournalRecord) throws {
            guard record.schemaVersion <= configuration.schemaVersion else {
                throw DurableLoopError.unsupportedSchemaVersion(
                    loop: id, sequence: record.sequence, found: record.schemaVersion,
                    supported: configuration.schemaVersion)
            }
            decoder.userInfo[.durableSchemaVersion] = record.schemaVersion
        }
        var state = initial
        var sequence: UInt64 = 0
        if let snapshot = try await journal.latestSnapshot(loop: id) {
            try check(snapshot)
            do {
                state = try decoder.decode(State.self, from: Data(snapshot.payload))
            } catch {
                throw DurableLoopError.undecodableSnapshot(loop: id, sequence: snapshot.sequence, reason: String(describing: error))
            }
            sequence = snapshot.sequence
        }
        // The tail is read from the snapshot's own event, which the journal must hold: a snapshot
        // ahead of the events explains a state no event led to.
        var firstPage: [JournalRecord]?
        if sequence > 0 {
            var page = try await journal.events(loop: id, after: sequence - 1, limit: 4_096)
            guard page.first?.sequence == sequence else {
                throw DurableLoopError.snapshotAheadOfEvents(loop: id, sequence: sequence)
            }
            page.removeFirst()
            firstPage = page
        }
        while true {
            let page: [JournalRecord]
            if let first = firstPage, !first.isEmpty {
                page = first
            } else {
                page = try await journal.events(loop: id, after: sequence, limit: 4_096)
            }
            firstPage = nil
            if page.isEmpty { break }
            for record in page {
                guard record.sequence == sequence + 1 else {
                    throw DurableLoopError.journalGap(loop: id, expected: sequence + 1, found: record.sequence)
                }
                try check(record)
                let event: Event
                do {
                    event = try decoder.decode(Event.self, from: Data(record.payload))
                } catch {
                    throw DurableLoopError.undecodableEvent(loop: id, sequence: record.sequence, reason: String(describing: error))
                }
                reduce(&state, event)
                sequence = record.sequence
            }
        }
        return (state, sequence)
    }
}

/// The states of a ``DurableLoop``, from ``DurableLoop/states``: the current one, then the state
/// after every journaled event, in order. Ends when the loop stops.
public struct DurableStates<State: Sendable>: AsyncSequence, Sendable {
    let base: AsyncStream<Applied<State>>

    /// Makes an iterator; iterate one at a time.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: base.makeAsyncIterator())
    }

    /// Iterates ``DurableStates``.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<Applied<State>>.Iterator
        var last: UInt64?

        /// The next state, or `nil` once the loop stopped.
        public mutating func next() async -> State? {
            while let applied = await base.next() {
                // Steps that only forwarded an effect's event to the journal leave the state alone.
                if applied.sequence != last {
                    last = applied.sequence
                    return applied.state
                }
            }
            return nil
        }

        /// The next state, or `nil` once the loop stopped.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> State? {
            while let applied = await base.next(isolation: actor) {
                if applied.sequence != last {
                    last = applied.sequence
                    return applied.state
                }
            }
            return nil
        }
    }
}
#endif
