#if Postgres
import FeedbackLoopDurable
import PostgresNIO

extension PostgresJournal {
    /// PostgreSQL did not answer: no connection in time, no answer on one, or a closed one. An
    /// operation reports it as `JournalError.unavailable(_:)` with the loop and the operation.
    struct NoAnswer: Error, CustomStringConvertible {
        let description: String

        init(_ description: String) { self.description = description }
    }

    /// SQLSTATE of a lock wait cut off by `lock_timeout`.
    static let lockNotAvailable = "55P03"

    /// Whether the server cancelled a statement for running past `statement_timeout` (SQLSTATE
    /// 57014, which a cancel request gets too, with another message).
    static func isStatementTimeout(_ error: any Error) -> Bool {
        guard let info = (error as? PSQLError)?.serverInfo, info[.sqlState] == "57014" else { return false }
        return info[.message]?.contains("statement timeout") == true
    }

    /// `error` as a caller of the journal sees it: a `JournalError`, a `DurableLoopError` or a
    /// cancellation as thrown,
    /// anything else `JournalError.unavailable(_:)` naming the loop, the operation and the
    /// server's message — postgres-nio's own description of an error hides all of them.
    static func journalError(_ error: any Error, loop: String?, operation: String) -> any Error {
        if error is JournalError || error is DurableLoopError || error is CancellationError { return error }
        let place = loop.map { "journal of loop '\($0)'" } ?? "journal"
        return JournalError.unavailable("\(place): \(operation) failed: \(describe(error))")
    }

    /// The server's message and SQLSTATE, or the connection's failure. The error's detail is left
    /// out: it can quote stored values, and this text may reach a server's clients.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return String(describing: error) }
        if let message = error.serverInfo?[.message] {
            return message + (error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
        }
        if let underlying = error.underlying { return "\(error.code): \(underlying)" }
        return "\(error.code)"
    }

    /// The SQLSTATE of a server's error.
    static func sqlState(_ error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }
}
#endif
