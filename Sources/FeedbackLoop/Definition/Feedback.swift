/// One rule of the form "while the state says so, this work runs": a feedback watches a query of
/// the state, starts an effect when the query appears or changes, cancels it when the query
/// changes or goes away, and sends the effect's events back into the loop.
///
/// Feedbacks see every state the reducer produces, in order, none skipped, on the loop's drain
/// thread (``Backend/callback``) or actor (``Backend/actor``); the query closures run there and
/// must be cheap and pure. Effects start in the same step and their events queue behind the ones
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
/// Everything here is written once and used by both backends: the query diffing is part of the
/// system definition, not of an engine.
public struct Feedback<State: Sendable, Event: Sendable>: Sendable {
    @usableFromInline let makeReactor: @Sendable () -> Reactor<State, Event>

    /// A name for this feedback in failure messages, logs and diagrams, set with
    /// ``labeled(_:)``; `nil` names it by its position in the loop's `feedbacks` array.
    public internal(set) var label: String? = nil

    @inlinable
    init(makeReactor: @escaping @Sendable () -> Reactor<State, Event>) {
        self.makeReactor = makeReactor
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
        Feedback {
            let memory = ReactorMemory<(last: Query?, running: EffectHandle?)>((nil, nil))
            return { state, _, scope in
                let next = query(state)
                guard next != memory.value.last else { return }
                memory.value.last = next
                if let handle = memory.value.running {
                    memory.value.running = nil
                    scope.cancel(handle)
                }
                if let next { memory.value.running = scope.start(effects(next)) }
            }
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
        Feedback {
            let running = ReactorMemory<EffectHandle?>(nil)
            return { state, _, scope in
                if let handle = running.value {
                    running.value = nil
                    scope.cancel(handle)
                }
                if let next = query(state) { running.value = scope.start(effects(next)) }
            }
        }
    }

    /// Starts `effects(value)` when the query turns from `nil` to a value, lets it run while the
    /// query stays non-nil (whatever its value), and cancels it when the query turns `nil`.
    @inlinable
    public static func firstValueAfterNil<Value: Sendable>(
        _ query: @escaping @Sendable (State) -> Value?,
        effects: @escaping @Sendable (Value) -> Effect<Event>
    ) -> Feedback {
        Feedback {
            let memory = ReactorMemory<(present: Bool, running: EffectHandle?)>((false, nil))
            return { state, _, scope in
                let value = query(state)
                switch (memory.value.present, value) {
                case (false, let value?):
                    memory.value.present = true
                    memory.value.running = scope.start(effects(value))
                case (true, nil):
                    memory.value.present = false
                    if let handle = memory.value.running {
                        memory.value.running = nil
                        scope.cancel(handle)
                    }
                default:
                    break
                }
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
        Feedback {
            let memory = ReactorMemory<(wasTrue: Bool, running: EffectHandle?)>((false, nil))
            return { state, _, scope in
                let isTrue = predicate(state)
                guard isTrue != memory.value.wasTrue else { return }
                memory.value.wasTrue = isTrue
                if isTrue {
                    memory.value.running = scope.start(effects(state))
                } else if let handle = memory.value.running {
                    memory.value.running = nil
                    scope.cancel(handle)
                }
            }
        }
    }

    /// One effect per request in a set: requests that join the set start at once, side by side;
    /// requests that leave it are cancelled; requests that stay keep running undisturbed. An
    /// empty set cancels them all.
    ///
    /// For downloads, uploads, per-item subscriptions: anything that runs concurrently and is
    /// keyed by identity.
    @inlinable
    public static func requests<Request: Hashable & Sendable>(
        _ query: @escaping @Sendable (State) -> Set<Request>,
        effects: @escaping @Sendable (Request) -> Effect<Event>
    ) -> Feedback {
        Feedback {
            let memory = ReactorMemory<(last: Set<Request>, running: [Request: EffectHandle])>(([], [:]))
            return { state, _, scope in
                let next = query(state)
                guard next != memory.value.last else { return }
                for request in memory.value.last.subtracting(next) {
                    if let handle = memory.value.running.removeValue(forKey: request) { scope.cancel(handle) }
                }
                for request in next.subtracting(memory.value.last) {
                    if let handle = scope.start(effects(request)) { memory.value.running[request] = handle }
                }
                memory.value.last = next
            }
        }
    }

    /// Events from outside the loop — user input, a notification stream, a socket — for as long
    /// as the loop runs. The sequence is iterated in its own task from the start of the loop until
    /// it ends or the loop stops (which cancels the iteration). An error the sequence throws is
    /// reported like an effect error.
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
    @inlinable
    public static func custom(
        _ react: @escaping @Sendable (_ state: State, _ event: Event?) -> Effect<Event>
    ) -> Feedback {
        Feedback {
            { state, event, scope in
                _ = scope.start(react(state, event))
            }
        }
    }
}
