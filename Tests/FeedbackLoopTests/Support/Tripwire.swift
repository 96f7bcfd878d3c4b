import FeedbackLoop

/// Runs `onDeinit` when released: stands for user code whose `deinit` touches the loop — a view
/// model captured by a cancellation, an object held in the state. If the engine released it while
/// holding its lock, touching the loop would take the same lock again and trap.
final class Tripwire: Sendable, Hashable, CustomStringConvertible {
    private let onDeinit: @Sendable () -> Void

    init(_ onDeinit: @escaping @Sendable () -> Void) {
        self.onDeinit = onDeinit
    }

    deinit { onDeinit() }

    static func == (lhs: Tripwire, rhs: Tripwire) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    var description: String { "tripwire" }
}

/// A system whose state and events can hold tripwires.
enum Wired {
    struct State: Equatable, Sendable {
        var query: Int?
        var payload: Tripwire?
        var count = 0
    }

    enum Event: Equatable, Sendable {
        case setQuery(Int?)
        case hold(Tripwire?)
        case increment
    }

    @Sendable
    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .setQuery(let query): state.query = query
        case .hold(let payload): state.payload = payload
        case .increment: state.count += 1
        }
    }
}

/// The loop a tripwire touches when it goes off, held strongly (the tripwire's owner then holds
/// the last reference, and its release runs `Loop.deinit`) or weakly.
final class LoopBox: Sendable {
    private let strong = Locked<Loop<Wired.State, Wired.Event>?>(nil)
    private let weak = Locked<WeakLoop>(WeakLoop())
    let touches = CountdownLatch()

    struct WeakLoop { weak var loop: Loop<Wired.State, Wired.Event>? }

    /// Holds `loop` strongly when `owning` (until the first tripwire goes off), weakly otherwise.
    func hold(_ loop: Loop<Wired.State, Wired.Event>, owning: Bool) {
        if owning { strong.withLock { $0 = loop } }
        weak.withLock { $0.loop = loop }
    }

    /// A tripwire whose `deinit` reads the loop's state and statistics and sends to it; when the
    /// box owns the loop, it then releases the loop's last reference, which stops it.
    func tripwire() -> Tripwire {
        Tripwire { [self] in
            do {
                let loop = strong.withLock { $0.take() } ?? weak.withLock { $0.loop }
                if let loop {
                    _ = loop.state
                    _ = loop.statistics
                    loop.send(.increment)
                }
            }  // an owned loop's last reference goes here: `Loop.deinit` begins its stop
            touches.increment()
        }
    }
}
