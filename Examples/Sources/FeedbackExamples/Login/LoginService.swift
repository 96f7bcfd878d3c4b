import Synchronization

/// Checks credentials — the talk's `loginService.login(username:password:)`.
///
/// Cancelled through task cancellation when the screen no longer wants the answer.
public protocol LoginService: Sendable {
    /// Whether the credentials are valid. Throws when the check itself fails (network, server).
    func login(username: String, password: String) async throws -> Bool
}

/// A ``LoginService`` with a fixed set of accounts, simulated latency and injected failures.
public final class FakeLoginService: LoginService {
    /// The one call this service answers.
    public enum Operation: String, Hashable, Sendable {
        case login
    }

    /// Latency, injected failures and the record of calls.
    public let server: FakeServer<Operation>
    private let accounts: [String: String]
    private let attempts = Mutex<[String]>([])

    /// A service accepting `accounts` (username → password), answering after `latency` on
    /// `clock`, failing the first `failing` calls.
    public init(
        accounts: [String: String] = ["ada": "lovelace"],
        latency: Duration = .zero,
        clock: any Clock<Duration> = ContinuousClock(),
        failing: Int = 0
    ) {
        self.accounts = accounts
        self.server = FakeServer(latency: latency, clock: clock, failing: failing > 0 ? [.login: failing] : [:])
    }

    /// The usernames of every login started, in order.
    public var usernamesTried: [String] {
        attempts.withLock { $0 }
    }

    public func login(username: String, password: String) async throws -> Bool {
        attempts.withLock { $0.append(username) }
        return try await server.perform(.login) { accounts[username] == password }
    }
}
