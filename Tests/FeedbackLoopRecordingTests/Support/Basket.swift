import FeedbackLoop

/// A small list feature with the shape of the articles' examples: an enum state whose cases
/// carry data, UI actions nested in one event case, and effects that call a service.
enum Basket {
    enum State: Equatable, Sendable {
        case loading
        case loadingFailed(String)
        case loaded([String])
        case adding([String], String)
    }

    enum Event: Equatable, Sendable, Codable {
        case ui(Action)
        case loaded([String])
        case failed(String)
        case added(String)
    }

    enum Action: Equatable, Sendable, Codable {
        case retry
        case add(String)
    }

    static func reduce(_ state: inout State, _ event: Event) {
        switch (state, event) {
        case (.loading, .loaded(let items)):
            state = .loaded(items)
        case (.loading, .failed(let reason)):
            state = .loadingFailed(reason)
        case (.loadingFailed, .ui(.retry)):
            state = .loading
        case (.loaded(let items), .ui(.add(let item))):
            state = .adding(items, item)
        case (.adding(let items, _), .added(let item)):
            state = .loaded(items + [item])
        case (.adding(let items, _), .failed):
            state = .loaded(items)
        default:
            break  // every other event is ignored in this state
        }
    }

    /// Loads through `load` (called with the attempt number, from 1) and adds by echoing.
    static func feedbacks(load: @escaping @Sendable (Int) async throws -> [String]) -> [Feedback<State, Event>] {
        let attempts = Counter()
        return [
            .skippingRepeated({ $0 == .loading ? true : nil }) { _ in
                .run { send in
                    do {
                        send(.loaded(try await load(attempts.next())))
                    } catch {
                        send(.failed("\(error)"))
                    }
                }
            },
            .skippingRepeated({ if case .adding(_, let item) = $0 { item } else { nil } }) { item in
                .send(.added(item))
            },
        ]
    }

    struct Offline: Error, CustomStringConvertible {
        var description: String { "offline" }
    }
}

import Synchronization

/// Numbers the loader's attempts from 1.
final class Counter: Sendable {
    private let value = Lock(0)

    func next() -> Int {
        value.withLock { value in
            value += 1
            return value
        }
    }
}
