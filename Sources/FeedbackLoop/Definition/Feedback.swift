/// One rule of the form "while the state says so, this work runs": a feedback watches a query of
/// the state, starts an effect when the query appears or changes, cancels it when the query
/// changes or goes away, and sends the effect's events back into the loop.
///
/// Feedbacks see every state the reducer produces, in order, none skipped, wherever the loop's
/// backend runs its reducer: the thread holding the drain role (``Backend/callback``), the loop's
/// actor (``Backend/actor``) or its host task (``Backend/stream``); the query closures run there
/// and must be cheap and pure. Effects start in the same step and their events queue behind the ones
/// already waiting — a feedback can never re-enter the reducer.
///
/// ```swift
/// let feedbacks: [Feedback<Movies.State, Movies.Event>] = [
///     .skippingRepeated({ $0.pageToLoad }) { page in
///         .run { send in send(.loaded(try await api.page(page))) }
///     },
///     .requests({ $0.downloads }) { id in .run { send in send(.downloaded(id, try await api.download(id))) } },
///     .events(nearBottom.map { _ in .loadNextPage }),
/// ]
/// ```
///
/// Everything here is written once and used by every backend: the query diffing is part of the
/// system definition, not of an engine.
public struct Feedback<State: Sendable, Event: Sendable>: Sendable {
    @usableFromInline let makeReactor: @Sendable () -> Reactor<State, Event>
    /// The same rule, built to run as part of a child feature lifted into a parent (see
    /// ``ChildScope``): its effects go through the child's door, which maps their events into the
    /// parent's and cancels them when the child goes away. Each constructor writes its rule once,
    /// generic over the door, so the loop's own path stays specialised and unchanged.
    @usableFromInline let makeChildReactor: @Sendable () -> ChildReactor<State, Event>

    /// A name for this feedback in failure messages, logs and diagrams, set with
    /// ``labeled(_:)``; `nil` names it by its position in the loop's `feedbacks` array.
    public internal(set) var label: String? = nil

    @inlinable
    init(
        makeReactor: @escaping @Sendable () -> Reactor<State, Event>,
        makeChildReactor: @escaping @Sendable () -> ChildReactor<State, Event>
    ) {
        self.makeReactor = makeReactor
        self.makeChildReactor = makeChildReactor
    }

    /// Starts `effects(query)` for each new non-nil value of an `Equatable` query, cancelling the
    /// effect of the previous value; a `nil` query cancels and starts nothing. States that leave
    /// the query unchanged do nothing: the running effect keeps running.
    ///
    /// The workhorse: "while `pageToLoad` is 3, load page 3".
    @inlinable
    public static func skippingRepeated<Query: Equatable & Sendable>(
        _ query: @escaping @Sendable (State) -> Query?,
        effects: @escaping @Sendable (Query) -> Effect<Event>
    ) -> Feedback {
        Feedback(
            makeReactor: { skippingRepeatedReactor(query, effects) },
            makeChildReactor: { skippingRepeatedReactor(query, effects) })
    }

    @inlinable
    static func skippingRepeatedReactor<Query: Equatable & Sendable, Door: EffectDoor<Event>>(
        _ query: @escaping @Sendable (State) -> Query?,
        _ effects: @escaping @Sendable (Query) -> Effect<Event>
    ) -> (State, Event?, Door) -> Void {
        let memory = ReactorMemory<(last: Query?, running: EffectHandle?)>((nil, nil))
        return { state, _, door in
            let next = query(state)
            guard next != memory.value.last else { return }
            memory.value.last = next
            if let handle = memory.value.running {
                memory.value.running = nil
                door.cancel(handle)
            }
            if let next { memory.value.running = door.start(effects(next)) }
        }
    }

    /// Starts `effects(query)` for every state whose query is non-nil — even when the value is
    /// the same as before — cancelling the previous effect each time; a `nil` query cancels and
    /// starts nothing.
    @inlinable
    public static func lensing<Query: Sendable>(
        _ query: @escaping @Sendable (State) -> Query?,
        effects: @escaping @Sendable (Query) -> Effect<Event>
    ) -> Feedback {
        Feedback(
            makeReactor: { lensingReactor(query, effects) },
            makeChildReactor: { lensingReactor(query, effects) })
    }

    @inlinable
    static func lensingReactor<Query: Sendable, Door: EffectDoor<Event>>(
        _ query: @escaping @Sendable (State) -> Query?,
        _ effects: @escaping @Sendable (Query) -> Effect<Event>
    ) -> (State, Event?, Door) -> Void {
        let running = ReactorMemory<EffectHandle?>(nil)
        return { state, _, door in
            if let handle = running.value {
                running.value = nil
                door.cancel(handle)
            }
            if let next = query(state) { running.value = door.start(effects(next)) }
        }
    }

    /// Starts `effects(value)` when the query turns from `nil` to a value, lets it run while the
    /// query stays non-nil (whatever its value), and cancels it when the query turns `nil`.
    @inlinable
    public static func firstValueAfterNil<Value: Sendable>(
        _ query: @escaping @Sendable (State) -> Value?,
        effects: @escaping @Sendable (Value) -> Effect<Event>
    ) -> Feedback {
        Feedback(
            makeReactor: { firstValueAfterNilReactor(query, effects) },
            makeChildReactor: { firstValueAfterNilReactor(query, effects) })
    }

    @inlinable
    static func firstValueAfterNilReactor<Value: Sendable, Door: EffectDoor<Event>>(
        _ query: @escaping @Sendable (State) -> Value?,
        _ effects: @escaping @Sendable (Value) -> Effect<Event>
    ) -> (State, Event?, Door) -> Void {
        let memory = ReactorMemory<(present: Bool, running: EffectHandle?)>((false, nil))
        return { state, _, door in
            let value = query(state)
            switch (memory.value.present, value) {
            case (false, let value?):
                memory.value.present = true
                memory.value.running = door.start(effects(value))
            case (true, nil):
                memory.value.present = false
                if let handle = memory.value.running {
                    memory.value.running = nil
                    door.cancel(handle)
                }
            default:
                break
            }
        }
    }

    /// Edge-triggered: starts `effects(state)` when `predicate` turns true, and cancels it when
    /// the predicate turns false. States that keep the predicate true do nothing.
    @inlinable
    public static func whenBecomesTrue(
        _ predicate: @escaping @Sendable (State) -> Bool,
        effects: @escaping @Sendable (State) -> Effect<Event>
    ) -> Feedback {
        Feedback(
            makeReactor: { whenBecomesTrueReactor(predicate, effects) },
            makeChildReactor: { whenBecomesTrueReactor(predicate, effects) })
    }

    @inlinable
    static func whenBecomesTrueReactor<Door: EffectDoor<Event>>(
        _ predicate: @escaping @Sendable (State) -> Bool,
        _ effects: @escaping @Sendable (State) -> Effect<Event>
    ) -> (State, Event?, Door) -> Void {
        let memory = ReactorMemory<(wasTrue: Bool, running: EffectHandle?)>((false, nil))
        return { state, _, door in
            let isTrue = predicate(state)
            guard isTrue != memory.value.wasTrue else { return }
            memory.value.wasTrue = isTrue
            if isTrue {
                memory.value.running = door.start(effects(state))
            } else if let handle = memory.value.running {
                memory.value.running = nil
                door.cancel(handle)
            }
        }
    }

    /// One effect per request in a set: requests that join the set start at once, side by side;
    /// requests that leave it are cancelled; requests that stay keep running undisturbed. An
    /// empty set cancels them all.
    ///
    /// For downloads, uploads, per-item subscriptions: anything that runs concurrently and is
    /// keyed by identity.
    ///
    /// Each state whose set changed costs O(set size): the new set is compared with the last one
    /// element by element, and the reducer's write copied the set if the loop still held the
    /// previous state. With hundreds of requests and one changing per event, keep them as keyed
    /// children instead (``IdentifiedStates`` and ``KeyedChildScope``, each child's feedback
    /// running its request): their revisions say which children changed, so the feedback's work
    /// per event is O(changes) (`feedback-bench --scenario cancellation` measures both with 1,000
    /// requests).
    @inlinable
    public static func requests<Request: Hashable & Sendable>(
        _ query: @escaping @Sendable (State) -> Set<Request>,
        effects: @escaping @Sendable (Request) -> Effect<Event>
    ) -> Feedback {
        Feedback(
            makeReactor: { requestsReactor(query, effects) },
            makeChildReactor: { requestsReactor(query, effects) })
    }

    @inlinable
    static func requestsReactor<Request: Hashable & Sendable, Door: EffectDoor<Event>>(
        _ query: @escaping @Sendable (State) -> Set<Request>,
        _ effects: @escaping @Sendable (Request) -> Effect<Event>
    ) -> (State, Event?, Door) -> Void {
        let memory = ReactorMemory<(last: Set<Request>, running: [Request: EffectHandle])>(([], [:]))
        return { state, _, door in
            let next = query(state)
            // O(1) when the state hands back the same set; otherwise two passes of lookups, which
            // build no intermediate sets (`subtracting` twice allocated two per changed state).
            guard next != memory.value.last else { return }
            let last = memory.value.last
            memory.value.last = next
            for request in last where !next.contains(request) {
                if let handle = memory.value.running.removeValue(forKey: request) { door.cancel(handle) }
            }
            for request in next where !last.contains(request) {
                if let handle = door.start(effects(request)) { memory.value.running[request] = handle }
            }
        }
    }

    /// Events from outside the loop — user input, a notification stream, a socket — for as long
    /// as the loop runs. The sequence is iterated in its own task from the start of the loop until
    /// it ends or the loop stops (which cancels the iteration). An error the sequence throws is
    /// reported like an effect error.
    ///
    /// Lifted into a parent as part of a child feature, the source runs from the child's
    /// appearance until the child goes away.
    @inlinable
    public static func events<Source: AsyncSequence & Sendable>(_ source: Source) -> Feedback
    where Source.Element == Event {
        .custom { _, event in
            guard event == nil else { return .none }
            return .run { send in
                for try await element in source {
                    send(element)
                }
            }
        }
    }

    /// Events from a callback-style source. `register` runs once, on the drain thread, when the
    /// loop starts; events it sends while registering are queued, never reduced in place. The
    /// returned ``Cancellation`` is called once when the loop stops.
    ///
    /// Lifted into a parent as part of a child feature, `register` runs when the child appears
    /// and the cancellation when it goes away.
    @inlinable
    public static func events(register: @escaping @Sendable (_ sink: Sink<Event>) -> Cancellation) -> Feedback {
        .custom { _, event in
            event == nil ? .callback(register) : .none
        }
    }

    /// A feedback that sees every step: the new state and the event that caused it (`nil` for the
    /// initial state). Each effect it returns runs until it ends by itself or the loop stops; the
    /// loop never cancels it earlier.
    ///
    /// For reactions to events rather than to state ("after every `.saved`, log"), or for rules
    /// the other constructors do not express.
    ///
    /// Lifted into a parent as part of a child feature (see ``ChildScope``), it sees the child's
    /// appearance (`nil`) and each of the child's own events; a change the parent makes to the
    /// child's state is not an event of the child and does not call `react`. Its effects run
    /// until they end, the child goes away or the loop stops.
    @inlinable
    public static func custom(
        _ react: @escaping @Sendable (_ state: State, _ event: Event?) -> Effect<Event>
    ) -> Feedback {
        Feedback(
            makeReactor: { customReactor(react) },
            makeChildReactor: { customReactor(react) })
    }

    @inlinable
    static func customReactor<Door: EffectDoor<Event>>(
        _ react: @escaping @Sendable (_ state: State, _ event: Event?) -> Effect<Event>
    ) -> (State, Event?, Door) -> Void {
        { state, event, door in
            // A step without an event is either the first one or, inside a parent, a change the
            // parent made to the child's state: only the first is shown.
            guard event != nil || door.isFirstStep else { return }
            _ = door.start(react(state, event))
        }
    }
}
