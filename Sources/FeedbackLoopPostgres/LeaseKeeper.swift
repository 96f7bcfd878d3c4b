#if Postgres
import FeedbackLoopDurable
import Logging
import ServiceLifecycle

/// Keeps a `DurableLoop`'s lease on a ``PostgresJournal`` alive, as a swift-service-lifecycle
/// `Service`: it renews the lease every `renewEvery`; when the lease is lost — renewal refused
/// because it expired or another node took the loop, or no renewal succeeded for a whole
/// ``PostgresJournal/leaseDuration`` — it stops the loop with
/// `DurableLoop.stop(because:)`, which cancels its effects.
///
/// On graceful shutdown or cancellation it stops the loop with `DurableLoop.stop()`,
/// which gives the lease back. It ends by itself once the loop has stopped.
public struct LeaseKeeper<State: Codable & Sendable, Event: Codable & Sendable>: Service {
    let loop: DurableLoop<State, Event>
    let journal: PostgresJournal
    let renewEvery: Duration

    /// A keeper of `loop`'s lease in `journal`.
    ///
    /// - Parameters:
    ///   - loop: The loop whose lease to keep; it must have been created on `journal`.
    ///   - journal: The journal that holds the lease.
    ///   - renewEvery: How often to renew; default a third of the lease's duration, so that two
    ///     renewals may fail before the lease runs out.
    public init(loop: DurableLoop<State, Event>, journal: PostgresJournal, renewEvery: Duration? = nil) {
        self.loop = loop
        self.journal = journal
        self.renewEvery = renewEvery ?? journal.leaseDuration / 3
    }

    /// Whether a renewal's error says the lease is gone, rather than that the database did not
    /// answer.
    static func meansLost(_ error: any Error) -> Bool {
        switch error {
        case JournalError.fenced, JournalError.ownedElsewhere: true
        default: false
        }
    }

    public func run() async throws {
        var lastRenewal = ContinuousClock.now
        while loop.isRunning {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: renewEvery) }
            if Task.isCancelled || Task.isShuttingDownGracefully {
                await loop.stop()
                return
            }
            guard loop.isRunning else { return }
            do {
                try await journal.renew(loop: loop.id, epoch: loop.epoch)
                lastRenewal = .now
            } catch let error where Self.meansLost(error) {
                journal.logger.error("durable loop '\(loop.id)' lost its lease: \(error)")
                await loop.stop(because: error)
                return
            } catch {
                // The database did not answer: the lease may still be live. Give up only when it
                // cannot be any more.
                if ContinuousClock.now - lastRenewal >= journal.leaseDuration {
                    journal.logger.error("durable loop '\(loop.id)': no renewal for a whole lease (\(error)); stopping")
                    await loop.stop(because: JournalError.fenced(loop: loop.id, epoch: loop.epoch))
                    return
                }
                journal.logger.warning("durable loop '\(loop.id)': renewing the lease failed, will retry: \(error)")
            }
        }
    }
}
#endif
