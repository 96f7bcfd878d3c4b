/// A failure as a feature's state keeps it: the message only. Any error a service throws becomes
/// one of these in the state, so states stay `Equatable` and `Codable` (the pharmacies article's
/// `CoreError`, the paging README's `NSError`).
public struct FeatureError: Error, Hashable, Sendable, Codable, CustomStringConvertible {
    public var message: String

    public init(message: String) {
        self.message = message
    }

    /// The message of any error.
    public init(_ error: any Error) {
        self.message = String(describing: error)
    }

    public var description: String { message }
}
