import FeedbackLoop
import Logging

/// The system the reference model and the engines both run: a state with one query per feedback
/// constructor, events that move those queries, and feedbacks whose effects the test controls.
///
/// Every constructor is covered: `skippingRepeated` (query `a`), `lensing` (`b`),
/// `firstValueAfterNil` (`c`), `whenBecomesTrue` (`flag`), `requests` (`set`) and `custom` (on
/// `.ping`); and a child feature (`kid`, lifted by a `ChildScope`) with a `skippingRepeated` of
/// its own, so that the model follows each of the child's lives. What kind of effect a feedback starts is a pure function of the feedback and the
/// query's value (``ModelSystem/kind(feedback:value:)``), so the model knows without running it.
enum ModelSystem {
    struct State: Hashable, Sendable, CustomStringConvertible {
        var a: Int?
        var b: Int?
        var c: Int?
        var flag = false
        var set: Set<Int> = []
        /// The child's state: present while non-nil; each time it appears is a new life.
        var kid: Int?
        /// Every event reduced, in order: two states are equal only if their histories are.
        var history: [Event] = []

        var description: String {
            "a \(a.map(String.init) ?? "nil") b \(b.map(String.init) ?? "nil") c \(c.map(String.init) ?? "nil") "
                + "flag \(flag) set \(set.sorted()) kid \(kid.map(String.init) ?? "nil") after \(history.count) events"
        }
    }

    enum Op: Hashable, Sendable, CustomStringConvertible {
        case setA(Int?), setB(Int?), setC(Int?), setFlag(Bool), insert(Int), remove(Int), setKid(Int?), ping, noop

        var description: String {
            switch self {
            case .setA(let v): "a=\(v.map(String.init) ?? "nil")"
            case .setB(let v): "b=\(v.map(String.init) ?? "nil")"
            case .setC(let v): "c=\(v.map(String.init) ?? "nil")"
            case .setFlag(let v): "flag=\(v)"
            case .insert(let v): "+\(v)"
            case .remove(let v): "-\(v)"
            case .setKid(let v): "kid=\(v.map(String.init) ?? "nil")"
            case .ping: "ping"
            case .noop: "noop"
            }
        }
    }

    /// An event: what it does, and a tag that tells where it came from (the sender and its
    /// sequence number in concurrent runs; the step in deterministic ones).
    struct Event: Hashable, Sendable, CustomStringConvertible {
        var op: Op
        var tag: Int
        var description: String { "\(op)#\(tag)" }
    }

    @Sendable
    static func reduce(_ state: inout State, _ event: Event) {
        switch event.op {
        case .setA(let v): state.a = v
        case .setB(let v): state.b = v
        case .setC(let v): state.c = v
        case .setFlag(let v): state.flag = v
        case .insert(let v): state.set.insert(v)
        case .remove(let v): state.set.remove(v)
        case .setKid(let v): state.kid = v
        case .ping, .noop: break
        }
        state.history.append(event)
    }

    enum Kind: Hashable, Sendable {
        /// A `.run` effect driven by the test's commands.
        case run
        /// A `.callback` effect driven by the test's commands.
        case callback
        /// `.send(noop)`: finishes as it starts.
        case send
        /// `.none`: nothing starts.
        case none
    }

    /// The feedbacks, by position: 0 skippingRepeated(a), 1 lensing(b), 2 firstValueAfterNil(c),
    /// 3 whenBecomesTrue(flag), 4 requests(set), 5 custom(ping), 6 the kid's skippingRepeated.
    static let feedbackCount = 7

    /// What feedback `feedback` starts for a query of `value`. `lensing` restarts on every state,
    /// so it never starts a `.send` (which would feed itself forever); `requests` starts its
    /// effects in `Set` order, so it never starts a `.send` either (the order of their events
    /// would then depend on hashing).
    static func kind(feedback: Int, value: Int) -> Kind {
        switch feedback {
        case 0: [Kind.run, .callback, .send, .none][value % 4]
        case 1: [Kind.callback, .none, .run][value % 3]
        case 2: [Kind.run, .callback, .send][value % 3]
        case 3: .run
        case 4: [Kind.run, .callback][value % 2]
        case 5: .send
        default: [Kind.run, .callback, .send][value % 3]
        }
    }

    /// The events a `.send` effect of `feedback` sends: one `noop`; the kid's removes the kid and
    /// then sends a `noop`, which must then be dropped: it belongs to a life that has ended.
    static func sentEvents(feedback: Int, value: Int) -> [Event] {
        let tag = -(feedback * 100 + value) - 1
        if feedback == 6 { return [Event(op: .setKid(nil), tag: tag), Event(op: .noop, tag: tag)] }
        return [Event(op: .noop, tag: tag)]
    }

    /// The kid: its state is `kid`, and its events are the parent's own (the parent's reducer
    /// handles them; the scope is there for the kid's lives).
    static let kidScope = ChildScope(
        state: StatePath(\State.kid),
        event: EventPath<Event, Event>(embed: { $0 }, extract: { _ in nil }))

    /// The feedbacks, with `make` building each effect from its identity.
    static func feedbacks(_ make: @escaping @Sendable (EffectKey.Partial) -> Effect<Event>) -> [Feedback<State, Event>] {
        [
            .skippingRepeated({ $0.a }) { make(.init(feedback: 0, value: $0)) },
            .lensing({ $0.b }) { make(.init(feedback: 1, value: $0)) },
            .firstValueAfterNil({ $0.c }) { make(.init(feedback: 2, value: $0)) },
            .whenBecomesTrue({ $0.flag }) { _ in make(.init(feedback: 3, value: 0)) },
            .requests({ $0.set }) { make(.init(feedback: 4, value: $0)) },
            .custom { _, event in event?.op == .ping ? make(.init(feedback: 5, value: 0)) : .none },
            kidScope.feedback([.skippingRepeated({ Optional($0) }) { make(.init(feedback: 6, value: $0)) }]),
        ]
    }
}

/// An effect's identity, the same in the model and in a running loop: the feedback, the query's
/// value, and how many effects that feedback had started for that value before.
struct EffectKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    struct Partial: Hashable, Sendable {
        var feedback: Int
        var value: Int
    }

    var feedback: Int
    var value: Int
    var generation: Int

    static func < (lhs: EffectKey, rhs: EffectKey) -> Bool {
        (lhs.feedback, lhs.value, lhs.generation) < (rhs.feedback, rhs.value, rhs.generation)
    }

    var description: String { "f\(feedback)(\(value))#\(generation)" }
}

/// The model's loops log nothing: tens of thousands of scripts send after stop on purpose, and
/// each loop would warn about it once.
let quietLogger = Logger(label: "reference-model") { _ in SwiftLogNoOpLogHandler() }
