import FeedbackLoop
import Logging

/// The child feature of the composition tests, written as if it ran alone: one query knob whose
/// feedback runs a named, never-ending callback effect, and a count its effects can raise.
enum Kid {
    struct State: Equatable, Sendable {
        var name: String
        var query: Int?
        var count = 0
        var grandchild: Kid.Leaf?
    }

    /// A grandchild: the same shape, one level down.
    struct Leaf: Equatable, Sendable {
        var query: Int?
    }

    enum Event: Equatable, Sendable {
        case setQuery(Int?)
        case add(Int)
        case leaf(Int?)
    }

    @Sendable
    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .setQuery(let query): state.query = query
        case .add(let amount): state.count += amount
        case .leaf(let query): state.grandchild?.query = query
        }
    }

    /// Counts every evaluation of the kid's query, to show which kids a step looked at.
    static func feedbacks(_ effects: Effects) -> [Feedback<State, Event>] {
        [
            .skippingRepeated({ state -> String? in
                effects.queried.increment()
                return state.query.map { "\(state.name)#\($0)" }
            }) { key in effects.effect(key) },
            ChildScope<State, Event, Leaf, Int?>(
                state: StatePath(\State.grandchild),
                event: EventPath(embed: Event.leaf, extract: { if case .leaf(let query) = $0 { query } else { nil } })
            ).feedback([
                .skippingRepeated({ $0.query }) { query in effects.effect("leaf#\(query)") },
            ]),
        ]
    }

    /// Where the kids' effects report, and the sinks they were given, by key.
    final class Effects: Sendable {
        let probe = EffectProbe()
        let queried = Locked(0)
        let sinks = Locked<[String: Sink<Event>]>([:])

        /// A never-ending callback effect that logs its start and cancellation under `key` and
        /// keeps its sink (when it sends the kid's events) for the test to send late events.
        func effect<E: Sendable>(_ key: String) -> Effect<E> {
            .callback { sink in
                if let sink = sink as? Sink<Event> { self.sinks.withLock { $0[key] = sink } }
                self.probe.log.append(.started(key))
                return Cancellation { self.probe.log.append(.cancelled(key)) }
            }
        }

        subscript(key: String) -> Sink<Event>? { sinks.withLock { $0[key] } }
    }
}

/// A parent that holds the kid in every way composition offers.
enum Family {
    enum Room: Equatable, Sendable {
        case hall(Kid.State)
        case garden
    }

    struct State: Equatable, Sendable {
        var eldest = Kid.State(name: "eldest")
        var guest: Kid.State?
        var room = Room.garden
        var kids = IdentifiedStates<Int, Kid.State>()
    }

    enum Event: Equatable, Sendable {
        case eldest(Kid.Event)
        case guest(Kid.Event)
        case hall(Kid.Event)
        case kid(Int, Kid.Event)
        case setGuest(Kid.State?)
        case setRoom(Room)
        case adopt(Int, Kid.State)
        case release(Int)
        /// The parent changes a kid's query itself, not through the kid's reducer.
        case overrule(Int, Int?)
        /// The parent puts the collection back as it was before the last `adopt`s.
        case restore(IdentifiedStates<Int, Kid.State>)
    }

    static let eldest = ChildScope(
        state: StatePath(\State.eldest),
        event: EventPath(embed: Event.eldest, extract: { if case .eldest(let event) = $0 { event } else { nil } }))

    static let guest = ChildScope(
        state: StatePath(\State.guest),
        event: EventPath(embed: Event.guest, extract: { if case .guest(let event) = $0 { event } else { nil } }))

    static let hall = ChildScope(
        state: StatePath(\State.room).appending(
            StatePath(extract: { if case .hall(let kid) = $0 { kid } else { nil } }, embed: Room.hall)),
        event: EventPath(embed: Event.hall, extract: { if case .hall(let event) = $0 { event } else { nil } }))

    static let kids = KeyedChildScope(
        state: \State.kids,
        embed: Event.kid,
        extract: { if case .kid(let id, let event) = $0 { (id, event) } else { nil } })

    @Sendable
    static func reduce(_ state: inout State, _ event: Event) {
        eldest.reduce(&state, event, with: Kid.reduce)
        guest.reduce(&state, event, with: Kid.reduce)
        hall.reduce(&state, event, with: Kid.reduce)
        kids.reduce(&state, event, with: Kid.reduce)
        switch event {
        case .eldest, .guest, .hall, .kid: break
        case .setGuest(let guest): state.guest = guest
        case .setRoom(let room): state.room = room
        case .adopt(let id, let kid): state.kids[id: id] = kid
        case .release(let id): state.kids[id: id] = nil
        case .overrule(let id, let query): state.kids[id: id]?.query = query
        case .restore(let kids): state.kids = kids
        }
    }

    static func feedbacks(_ effects: Kid.Effects) -> [Feedback<State, Event>] {
        [
            eldest.feedback(Kid.feedbacks(effects)),
            guest.feedback(Kid.feedbacks(effects)),
            hall.feedback(Kid.feedbacks(effects)),
            kids.feedback(Kid.feedbacks(effects)),
        ]
    }
}
