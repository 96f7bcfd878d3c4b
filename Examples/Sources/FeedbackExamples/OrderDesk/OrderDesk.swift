import FeedbackLoop

/// A desk holding many ``Order``s, each a feature of its own, keyed by number, with a limit on
/// how many are at the kitchen at once: the shape of every "N of the same thing" screen.
///
/// The desk's rules are its own: placing an order adds a child, cancelling removes it — and with
/// it, its submission in flight, whose late answer is dropped — and after every event the desk
/// lets waiting orders go, oldest first, while fewer than ``State/limit`` are in flight. Each
/// order's feedback runs for that order only: two orders with the same items are two
/// independent submissions, and an event runs the feedbacks of only the orders it touches,
/// however many orders the desk holds.
///
/// ```swift
/// let desk = OrderDesk.makeLoop(initial: OrderDesk.State(limit: 2), environment: .init(service: kitchen), backend: .actor)
/// desk.send(.place(["soup"]))      // order 1: submitting
/// desk.send(.place(["bread"]))     // order 2: submitting
/// desk.send(.place(["salad"]))     // order 3: waiting for a free slot
/// desk.send(.cancel(1))            // order 1's submission is cancelled; order 3 goes
/// ```
public enum OrderDesk: ExampleFeature {
    public typealias Environment = Order.Environment

    public struct State: Hashable, Sendable, CustomStringConvertible {
        public var orders: IdentifiedStates<Order.ID, Order.State>
        /// At most this many orders in flight at once.
        public var limit: Int
        /// The number the next order gets.
        public var nextID: Order.ID
        /// Waiting orders, oldest first.
        public var queue: [Order.ID]
        /// Orders at the kitchen now. Kept rather than counted so that an event costs the same
        /// whatever the number of orders.
        public var inFlight: Set<Order.ID>

        public init(
            orders: IdentifiedStates<Order.ID, Order.State> = [:],
            limit: Int = 2,
            nextID: Order.ID = 1,
            queue: [Order.ID] = [],
            inFlight: Set<Order.ID> = []
        ) {
            self.orders = orders
            self.limit = limit
            self.nextID = nextID
            self.queue = queue
            self.inFlight = inFlight
        }

        public var description: String {
            "limit \(limit): " + orders.map { "#\($0.id) \($0.value)" }.joined(separator: "; ")
        }
    }

    public enum Event: Hashable, Sendable, CustomStringConvertible {
        /// A new order with these items.
        case place([String])
        /// Withdraw an order, whatever its status.
        case cancel(Order.ID)
        /// One order's own event.
        case order(Order.ID, Order.Event)

        public var description: String {
            switch self {
            case .place(let items): "user: place \(items.joined(separator: ", "))"
            case .cancel(let id): "user: cancel #\(id)"
            case .order(let id, let event): "#\(id) \(event)"
            }
        }
    }

    public static var initialState: State { State() }

    /// Where the orders live and how their events travel.
    public static let orders = KeyedChildScope(
        state: \State.orders,
        embed: Event.order,
        extract: { if case .order(let id, let event) = $0 { (id, event) } else { nil } })

    /// The order's own reducer for its events, then the desk's rules, then admission.
    public static func reduce(_ state: inout State, _ event: Event) {
        orders.reduce(&state, event, with: Order.reduce)
        switch event {
        case .place(let items):
            state.orders[id: state.nextID] = Order.State(items: items)
            state.queue.append(state.nextID)
            state.nextID += 1
        case .cancel(let id):
            state.orders[id: id] = nil
            state.queue.removeAll { $0 == id }
            state.inFlight.remove(id)
        case .order(let id, _):
            guard let order = state.orders[id: id] else { break }
            if !order.isInFlight { state.inFlight.remove(id) }
            if order.status == .waiting && !state.queue.contains(id) { state.queue.append(id) }
        }
        admit(&state)
    }

    /// Lets the oldest waiting orders go while fewer than the limit are in flight. The desk
    /// drives its children through their own reducer, so an order's rules stay in one place.
    static func admit(_ state: inout State) {
        while state.inFlight.count < state.limit, !state.queue.isEmpty {
            let id = state.queue.removeFirst()
            guard state.orders[id: id] != nil else { continue }
            Order.reduce(&state.orders[id: id]!, .submit)
            if state.orders[id: id]?.isInFlight == true { state.inFlight.insert(id) }
        }
    }

    /// Every order's feedback, one instance per order.
    public static func feedbacks(_ environment: Environment) -> [Feedback<State, Event>] {
        [orders.feedback(Order.feedbacks(environment))]
    }
}
