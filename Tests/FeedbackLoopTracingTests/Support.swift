import Dispatch
import FeedbackLoop
import FeedbackLoopTracing
import InMemoryTracing
import Testing
import Tracing

/// Orders placed with a warehouse: each order being placed is one `.run` effect that reserves
/// it and finishes with `.placed`; withdrawing an order cancels its effect.
enum Orders {
    struct State: Equatable, Sendable {
        var placing: Set<String> = []
        var placed: [String] = []
    }

    enum Event: Equatable, Sendable {
        case place(String)
        case placed(String)
        case withdraw(String)
    }

    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .place(let id): state.placing.insert(id)
        case .placed(let id):
            state.placing.remove(id)
            state.placed.append(id)
        case .withdraw(let id): state.placing.remove(id)
        }
    }

    static func loop(
        _ backend: Backend, tracer: InMemoryTracer, warehouse: Warehouse,
        serviceContext: ServiceContextPropagation = .automatic
    ) -> Loop<State, Event> {
        Loop(
            initial: State(),
            reduce: reduce,
            feedbacks: [
                .requests({ $0.placing }) { id in
                    .run { send in
                        try await warehouse.reserve(id)
                        send.finish(sending: .placed(id))
                    }
                }
                .labeled("reserve")
            ],
            backend: backend,
            configuration: LoopConfiguration(
                label: "orders", onEffectError: { _ in }, instruments: [LoopTracing(tracer: tracer)],
                serviceContext: serviceContext))
    }
}

/// The fake back end: `reserve` makes a span of its own in the caller's context, tells who waits
/// for it that it started, and returns once the test lets that order through (or throws for an
/// order the test made fail, or once its task is cancelled).
final class Warehouse: Sendable {
    struct Refused: Error, Equatable {
        let order: String
    }

    let tracer: InMemoryTracer
    private let started = Latch()
    private let gates = Lock<[String: AsyncStream<Result<Void, Refused>>.Continuation]>([:])
    private let streams = Lock<[String: AsyncStream<Result<Void, Refused>>]>([:])

    init(tracer: InMemoryTracer) {
        self.tracer = tracer
    }

    func reserve(_ order: String) async throws {
        let span = tracer.startSpan("warehouse.reserve")
        span.attributes["order"] = order
        defer { span.end() }
        started.add(order)
        for await result in stream(order) {
            try result.get()
            return
        }
        throw CancellationError()
    }

    /// Lets `order`'s reservation return.
    func letThrough(_ order: String) { continuation(order).yield(.success(())) }

    /// Makes `order`'s reservation throw ``Refused``.
    func refuse(_ order: String) { continuation(order).yield(.failure(Refused(order: order))) }

    /// Returns once the reservation of every one of `orders` has started.
    func waitUntilStarted(_ orders: Set<String>) async throws {
        try await withDeadline("reservations of \(orders.sorted()) to start") { await self.started.wait(for: orders) }
    }

    private func stream(_ order: String) -> AsyncStream<Result<Void, Refused>> {
        makePair(order)
        return streams.withLock { $0[order]! }
    }

    private func continuation(_ order: String) -> AsyncStream<Result<Void, Refused>>.Continuation {
        makePair(order)
        return gates.withLock { $0[order]! }
    }

    private func makePair(_ order: String) {
        let (stream, continuation) = AsyncStream<Result<Void, Refused>>.makeStream(bufferingPolicy: .unbounded)
        let made = gates.withLock { gates -> Bool in
            guard gates[order] == nil else { return false }
            gates[order] = continuation
            return true
        }
        if made { streams.withLock { $0[order] = stream } }
    }
}

/// A set of names that a test waits to see complete.
final class Latch: Sendable {
    private let state = Lock<(seen: Set<String>, waiters: [(Set<String>, CheckedContinuation<Void, Never>)])>(([], []))

    func add(_ name: String) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.seen.insert(name)
            let seen = state.seen
            let ready = state.waiters.filter { $0.0.isSubset(of: seen) }.map(\.1)
            state.waiters.removeAll { $0.0.isSubset(of: seen) }
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    func wait(for names: Set<String>) async {
        await withCheckedContinuation { continuation in
            let reached = state.withLock { state -> Bool in
                if names.isSubset(of: state.seen) { return true }
                state.waiters.append((names, continuation))
                return false
            }
            if reached { continuation.resume() }
        }
    }
}
