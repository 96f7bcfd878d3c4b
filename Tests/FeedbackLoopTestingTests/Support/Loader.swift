import FeedbackLoop
import FeedbackLoopTesting

/// Loads a list through a service: `load` asks, the service answers `loaded` or `failed`.
enum Loader {
    enum Phase: Equatable, Sendable {
        case idle
        case loading
        case loaded([String])
        case failed(String)
    }

    struct State: Equatable, Sendable {
        var phase: Phase = .idle
        var attempts = 0
    }

    enum Event: Equatable, Sendable {
        case load
        case loaded([String])
        case failed(String)
    }

    struct ServiceError: Error, CustomStringConvertible {
        var description: String { "offline" }
    }

    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .load:
            state.phase = .loading
            state.attempts += 1
        case .loaded(let items):
            state.phase = .loaded(items)
        case .failed(let reason):
            state.phase = .failed(reason)
        }
    }

    /// `service` is the fake the test controls; the effect turns its answer into an event.
    static func feedbacks(service: @escaping @Sendable (_ attempt: Int) async throws -> [String]) -> [Feedback<State, Event>] {
        [
            .skippingRepeated({ $0.phase == .loading ? $0.attempts : nil }) { attempt in
                .run { send in
                    do {
                        send(.loaded(try await service(attempt)))
                    } catch {
                        send(.failed(String(describing: error)))
                    }
                }
            }
        ]
    }
}

extension Loader {
    /// A test loop of the loader whose service always answers `["Boots"]`.
    static func testLoop(backend: Backend, exhaustivity: Exhaustivity = .on) -> TestLoop<State, Event> {
        TestLoop(
            initial: State(), reduce: reduce, feedbacks: feedbacks { _ in ["Boots"] },
            backend: backend, exhaustivity: exhaustivity, timeout: suiteTimeout)
    }
}
