/// A benchmark run whose result is wrong: an event lost, an effect leaked, a count that does not
/// add up. A scenario throws it instead of returning figures, because a fast wrong answer is not
/// a benchmark result.
public struct ScenarioFailure: Error, Hashable, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
