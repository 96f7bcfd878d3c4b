import FeedbackLoopDurable

/// Whether the sessions' journal answers within ``timeout``, so that an unreachable database is
/// reported at once rather than after however long its client keeps retrying: PostgreSQL's own
/// check (`PostgresJournal.checkHealth(timeout:)`, a `SELECT 1`, connecting included), or for
/// SQLite a trivial read with a deadline.
///
/// Concurrent checks share one: a burst of health probes is one query.
final class JournalHealth: Sendable {
    /// The journal did not answer in time, or failed.
    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// How long a check (or any bounded journal read, ``bounded(_:)``) may take.
    let timeout: Duration
    private let journal: SessionJournal
    private let inFlight = LockedValue<Task<Unavailable?, Never>?>(nil)

    init(journal: SessionJournal, timeout: Duration) {
        self.journal = journal
        self.timeout = timeout
    }

    /// `nil` when the journal answered a trivial read within ``timeout``, else why not.
    func check() async -> Unavailable? {
        let task = inFlight.withLock { inFlight in
            if let inFlight { return inFlight }
            let task = Task { [self] () -> Unavailable? in
                defer { self.inFlight.withLock { $0 = nil } }
                do {
                    switch journal {
                    case .postgres(let journal):
                        try await journal.checkHealth(timeout: timeout)
                    case .sqlite(let journal):
                        // No session has the empty id (see PharmacySessions.isValid): no rows.
                        _ = try await bounded { try await journal.events(loop: "", after: 0, limit: 1) }
                    }
                    return nil
                } catch let error as Unavailable {
                    return error
                } catch {
                    return Unavailable(description: "\(error)")
                }
            }
            inFlight = task
            return task
        }
        return await task.value
    }

    /// `operation`'s result, or ``Unavailable`` if it has not returned within ``timeout`` (it is
    /// then cancelled, and left to end in the background) or threw.
    ///
    /// The caller is not held by an operation that ignores cancellation: a query waiting for a
    /// connection to a database that does not answer.
    func bounded<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let once = Once<Result<T, any Error>>()
        let work = Task {
            let result = await Result(awaiting: operation)
            once.settle(result)
        }
        let timer = Task { [timeout] in
            try await Task.sleep(for: timeout)
            once.settle(.failure(Unavailable(description: "the journal did not answer within \(timeout)")))
            work.cancel()
        }
        defer { timer.cancel() }
        switch await once.value {
        case .success(let value): return value
        case .failure(let error as Unavailable): throw error
        case .failure(let error): throw Unavailable(description: "\(error)")
        }
    }
}

/// A value settled once, awaited by one caller.
private final class Once<Value: Sendable>: Sendable {
    private let state = LockedValue<(value: Value?, waiter: CheckedContinuation<Value, Never>?)>((nil, nil))

    func settle(_ value: Value) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, Never>? in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: value)
    }

    var value: Value {
        get async {
            await withCheckedContinuation { waiter in
                let value = state.withLock { state -> Value? in
                    if state.value == nil { state.waiter = waiter }
                    return state.value
                }
                if let value { waiter.resume(returning: value) }
            }
        }
    }
}

extension Result where Failure == any Error {
    init(awaiting body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
