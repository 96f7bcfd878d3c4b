#if Postgres
import PostgresNIO
import Synchronization

/// The `statement_timeout` that journals have set for the session of each connection they used,
/// so that a connection is armed once rather than before every statement.
///
/// PostgreSQL arms a statement's timeout when the statement starts, from the session's setting:
/// a server-side function (the append's) cannot arm one for its own statement, so the bound has
/// to be on the session before the statement is sent. One record for the whole process, since
/// journals with different bounds may share a client, and so its connections: a journal re-arms
/// a connection that another left at another bound.
final class SessionBounds: Sendable {
    static let shared = SessionBounds()

    private struct Armed {
        weak var connection: PostgresConnection?
        var milliseconds: Int64
    }

    private let armed = Mutex<[ObjectIdentifier: Armed]>([:])

    /// Whether `connection`'s session already has `statement_timeout` at `milliseconds`.
    func isArmed(_ connection: PostgresConnection, at milliseconds: Int64) -> Bool {
        armed.withLock { armed in
            // The weak reference tells a live connection from a new one at a freed one's address.
            guard let entry = armed[ObjectIdentifier(connection)], entry.connection === connection else { return false }
            return entry.milliseconds == milliseconds
        }
    }

    /// Records that `connection`'s session now has `statement_timeout` at `milliseconds`.
    func arm(_ connection: PostgresConnection, at milliseconds: Int64) {
        armed.withLock { armed in
            // Closed connections' entries go when there are more than a pool keeps open.
            if armed.count >= 256 { armed = armed.filter { $0.value.connection != nil } }
            armed[ObjectIdentifier(connection)] = Armed(connection: connection, milliseconds: milliseconds)
        }
    }
}
#endif
