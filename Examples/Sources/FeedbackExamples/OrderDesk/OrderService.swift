import Synchronization

/// The kitchen that takes orders.
public protocol OrderService: Sendable {
    /// Submits an order's items; returns the kitchen's ticket. Honours task cancellation.
    func submit(_ items: [String]) async throws -> String
}

/// A kitchen that numbers tickets in the order it takes them, after an injectable latency on an
/// injectable clock, failing the first `failing` calls.
public final class FakeOrderService: OrderService {
    public enum Operation: String, Hashable, Sendable {
        case submit
    }

    public let server: FakeServer<Operation>
    private let tickets = Mutex(0)

    public init(latency: Duration = .zero, clock: any Clock<Duration> = ContinuousClock(), failing: Int = 0) {
        self.server = FakeServer(latency: latency, clock: clock, failing: failing > 0 ? [.submit: failing] : [:])
    }

    public func submit(_ items: [String]) async throws -> String {
        try await server.perform(.submit) {
            let number = tickets.withLock { number in
                number += 1
                return number
            }
            return "T\(number)"
        }
    }
}
