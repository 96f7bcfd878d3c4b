import FeedbackLoop

/// Records, in order, when callback effects start and when the loop cancels them, and hands
/// out effects that report both. Callback effects start and stop synchronously on the drain
/// thread, so the log's order is the loop's order.
final class EffectProbe: Sendable {
    enum Entry: Hashable, CustomStringConvertible {
        case started(String)
        case cancelled(String)
        var description: String {
            switch self {
            case .started(let name): "start \(name)"
            case .cancelled(let name): "cancel \(name)"
            }
        }
    }

    let log = Locked<[Entry]>([])

    var entries: [Entry] { log.current }

    func started(_ name: String) -> Int { entries.count { $0 == .started(name) } }
    func cancelled(_ name: String) -> Int { entries.count { $0 == .cancelled(name) } }

    /// A never-ending callback effect named `name`.
    func effect<Event>(_ name: String, sending events: [Event] = []) -> Effect<Event> {
        .callback { sink in
            self.log.append(.started(name))
            for event in events { sink(event) }
            return Cancellation { self.log.append(.cancelled(name)) }
        }
    }
}

/// A counter with a query knob: the common system of the contract tests.
enum Counter {
    struct State: Equatable, Sendable {
        var count = 0
        var query: Int?
        var flag = false
        var history: [Int] = []
    }

    enum Event: Equatable, Sendable {
        case increment
        case add(Int)
        case setQuery(Int?)
        case setFlag(Bool)
        case record(Int)
    }

    @Sendable
    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .increment: state.count += 1
        case .add(let amount): state.count += amount
        case .setQuery(let query): state.query = query
        case .setFlag(let flag): state.flag = flag
        case .record(let value): state.history.append(value)
        }
    }
}
