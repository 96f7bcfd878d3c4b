#if Durable && Testing
import FeedbackLoop
import FeedbackLoopDurable

/// The feature the durability checks run: a running total with a charge that an effect carries
/// out.
public enum Ledger {
    /// The ledger's state.
    public struct State: Codable, Sendable, Equatable {
        /// The sum of every added amount.
        public var total = 0
        /// How many events changed the ledger.
        public var count = 0
        /// A charge waiting for its effect; the `charger` feedback runs while it is set.
        public var pendingCharge: Int?
        /// The charges the effect carried out, in order.
        public var charged: [Int] = []

        /// An empty ledger.
        public init() {}
    }

    /// The ledger's events.
    public enum Event: Codable, Sendable, Equatable {
        /// Adds an amount to the total.
        case add(Int)
        /// Asks for a charge: starts the charger effect.
        case charge(Int)
        /// The charger effect's answer.
        case charged(Int)
    }

    /// What the charger effect does.
    public enum Charger: Sendable {
        /// Answers `charged` at once.
        case answers
        /// Waits until cancelled.
        case hangs
    }

    /// What the charger effect reports to a probe.
    public enum EffectEntry: Sendable, Hashable, CustomStringConvertible {
        /// It started for an amount, with this idempotency key.
        case started(Int, IdempotencyKey)
        /// It was cancelled.
        case cancelled(Int)

        /// The amount of a started effect.
        public var startedAmount: Int? {
            if case .started(let amount, _) = self { amount } else { nil }
        }

        public var description: String {
            switch self {
            case .started(let amount, let key): "started(\(amount), \(key))"
            case .cancelled(let amount): "cancelled(\(amount))"
            }
        }
    }

    /// The reducer.
    @Sendable
    public static func reduce(_ state: inout State, _ event: Event) {
        state.count += 1
        switch event {
        case .add(let amount): state.total += amount
        case .charge(let amount): state.pendingCharge = amount
        case .charged(let amount):
            state.charged.append(amount)
            state.pendingCharge = nil
        }
    }

    /// One feedback, `charger`: while a charge is pending, an effect runs for it.
    public static func feedbacks(
        _ context: DurableContext, effects: Probe<EffectEntry>, charger: Charger
    ) -> [Feedback<State, Event>] {
        [
            .skippingRepeated({ $0.pendingCharge }) { amount in
                .run { send in
                    let key = try context.idempotencyKey(feedback: "charger", query: amount)
                    effects.record(.started(amount, key))
                    switch charger {
                    case .answers:
                        send(.charged(amount))
                    case .hangs:
                        do {
                            try await Task.sleep(for: .seconds(3_600))
                        } catch {
                            effects.record(.cancelled(amount))
                        }
                    }
                }
            }
        ]
    }
}
#endif
