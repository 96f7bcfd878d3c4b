#if Durable && Testing
import FeedbackLoop
import FeedbackLoopDurable

/// An example durable feature at its version 2, which reads the journals its version 1 wrote:
/// the pattern of the article "Evolving a durable feature" (in `FeedbackLoopDurable`), checked
/// against a journal version 1 wrote (`Tests/FeedbackLoopDurableTests/Fixtures/tally-v1.sqlite`)
/// and by the replay check `feedback-journal`.
///
/// Version 1 had `rename(title:)` and a state field `title`; version 2 renamed both to `name`
/// and added `reset`. Version 2 journals with `DurableConfiguration(schemaVersion: 2)`.
public enum Tally {
    /// The schema version this code writes.
    public static let schemaVersion = 2

    /// The tally.
    public struct State: Sendable, Equatable, Codable {
        /// The sum of the amounts added since the last reset.
        public var total = 0
        /// The tally's name (version 1: `title`).
        public var name = ""
        /// How many resets (new in version 2).
        public var resets = 0

        /// An empty, unnamed tally.
        public init(total: Int = 0, name: String = "", resets: Int = 0) {
            self.total = total
            self.name = name
            self.resets = resets
        }

        enum CodingKeys: String, CodingKey {
            case total, name, resets
            /// Version 1's name for `name`.
            case title
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            total = try container.decode(Int.self, forKey: .total)
            if decoder.durableSchemaVersion == 1 {
                name = try container.decode(String.self, forKey: .title)
                resets = 0
            } else {
                name = try container.decode(String.self, forKey: .name)
                resets = try container.decode(Int.self, forKey: .resets)
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(total, forKey: .total)
            try container.encode(name, forKey: .name)
            try container.encode(resets, forKey: .resets)
        }
    }

    /// The tally's events.
    public enum Event: Sendable, Equatable, Codable {
        /// Adds an amount.
        case add(Int)
        /// Renames the tally (version 1: `rename(title:)`).
        case rename(name: String)
        /// Sets the total back to zero (new in version 2).
        case reset

        /// The current shape, with Swift's synthesized coding: a twin of `Event`, so that
        /// `Event`'s own `init(from:)` can choose a shape by version.
        enum Version2: Codable {
            case add(Int)
            case rename(name: String)
            case reset
        }

        /// Version 1's shape, as it was journaled.
        enum Version1: Decodable {
            case add(Int)
            case rename(title: String)
        }

        public init(from decoder: any Decoder) throws {
            if decoder.durableSchemaVersion == 1 {
                switch try Version1(from: decoder) {
                case .add(let amount): self = .add(amount)
                case .rename(let title): self = .rename(name: title)
                }
                return
            }
            switch try Version2(from: decoder) {
            case .add(let amount): self = .add(amount)
            case .rename(let name): self = .rename(name: name)
            case .reset: self = .reset
            }
        }

        public func encode(to encoder: any Encoder) throws {
            let current: Version2 = switch self {
            case .add(let amount): .add(amount)
            case .rename(let name): .rename(name: name)
            case .reset: .reset
            }
            try current.encode(to: encoder)
        }
    }

    /// The reducer.
    @Sendable
    public static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .add(let amount): state.total += amount
        case .rename(let name): state.name = name
        case .reset:
            state.total = 0
            state.resets += 1
        }
    }
}
#endif
