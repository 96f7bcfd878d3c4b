import FeedbackLoop

/// One order, as a feature of its own: it waits until the desk lets it go, is submitted to the
/// kitchen, and ends confirmed or failed (and may be retried). It knows nothing of the desk or of
/// the other orders; ``OrderDesk`` holds many of them.
public enum Order: ExampleFeature {
    /// An order's number at the desk.
    public typealias ID = Int

    /// What the feedback needs.
    public struct Environment: Sendable {
        public var service: any OrderService

        public init(service: any OrderService) {
            self.service = service
        }
    }

    /// One submission of an order: what is sent to the kitchen and which attempt it is.
    public struct Submission: Hashable, Sendable, CustomStringConvertible {
        public var items: [String]
        public var attempt: Int

        public init(items: [String], attempt: Int) {
            self.items = items
            self.attempt = attempt
        }

        public var description: String { "\(items.joined(separator: ", ")) (attempt \(attempt))" }
    }

    /// Where an order stands.
    public enum Status: Hashable, Sendable {
        /// Placed, waiting for the desk to let it go to the kitchen.
        case waiting
        /// Sent to the kitchen; the answer is awaited.
        case submitting(Submission)
        /// The kitchen took it, under this ticket.
        case confirmed(ticket: String)
        /// The kitchen refused it or could not be reached.
        case failed(String)
    }

    public struct State: Hashable, Sendable, CustomStringConvertible {
        public var items: [String]
        public var status: Status
        /// How many times it was submitted; numbers the next attempt.
        public var attempts: Int

        public init(items: [String], status: Status = .waiting, attempts: Int = 0) {
            self.items = items
            self.status = status
            self.attempts = attempts
        }

        /// The submission in flight: the query of the order's feedback.
        public var submission: Submission? {
            if case .submitting(let submission) = status { submission } else { nil }
        }

        public var isInFlight: Bool { submission != nil }

        public var description: String {
            switch status {
            case .waiting: "\(items.joined(separator: ", ")): waiting"
            case .submitting(let submission): "submitting \(submission)"
            case .confirmed(let ticket): "\(items.joined(separator: ", ")): confirmed, ticket \(ticket)"
            case .failed(let message): "\(items.joined(separator: ", ")): failed: \(message)"
            }
        }
    }

    public enum Event: Hashable, Sendable, CustomStringConvertible {
        /// The desk lets a waiting order go to the kitchen.
        case submit
        /// The kitchen answered attempt `attempt`.
        case confirmed(attempt: Int, ticket: String)
        case failed(attempt: Int, message: String)
        /// Put a failed order back in the queue.
        case retry

        public var description: String {
            switch self {
            case .submit: "desk: submit"
            case .confirmed(let attempt, let ticket): "kitchen: attempt \(attempt) confirmed, ticket \(ticket)"
            case .failed(let attempt, let message): "kitchen: attempt \(attempt) failed: \(message)"
            case .retry: "user: retry"
            }
        }
    }

    public static var initialState: State { State(items: []) }

    /// Answers for an attempt other than the one in flight are ignored.
    public static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .submit:
            guard state.status == .waiting else { return }
            state.attempts += 1
            state.status = .submitting(Submission(items: state.items, attempt: state.attempts))
        case .confirmed(let attempt, let ticket):
            guard state.submission?.attempt == attempt else { return }
            state.status = .confirmed(ticket: ticket)
        case .failed(let attempt, let message):
            guard state.submission?.attempt == attempt else { return }
            state.status = .failed(message)
        case .retry:
            guard case .failed = state.status else { return }
            state.status = .waiting
        }
    }

    /// While a submission is in flight, send it to the kitchen.
    public static func feedbacks(_ environment: Environment) -> [Feedback<State, Event>] {
        let service = environment.service
        return [
            .skippingRepeated(\.submission) { submission in
                .run { send in
                    do {
                        let ticket = try await service.submit(submission.items)
                        send(.confirmed(attempt: submission.attempt, ticket: ticket))
                    } catch is CancellationError {
                        // Cancelled with its order: nothing to say.
                    } catch {
                        send(.failed(attempt: submission.attempt, message: String(describing: error)))
                    }
                }
            }
        ]
    }
}
