#if Postgres
import FeedbackLoopDurable
import Foundation
import Instrumentation
import Logging
import PostgresNIO
import ServiceLifecycle

/// Journals the events other nodes sent to a `DurableLoop` with
/// ``PostgresJournal/deliver(_:to:schemaVersion:)``, as a swift-service-lifecycle `Service` run
/// by the loop's owner.
///
/// It listens on ``PostgresJournal/inboxChannel`` and also reads the inbox every `pollEvery`, so
/// a notification lost with a connection delays an event but never loses it. Each entry is
/// journaled with `DurableLoop.sendAndWait(_:)` and then deleted: delivery is
/// at least once (an entry journaled just before a crash is journaled again by the next owner).
/// An entry that cannot be decoded is logged at error level and deleted. The relay ends when
/// the loop stops, on graceful shutdown and on cancellation.
///
/// Each event is sent in its sender's `ServiceContext`, as ``PostgresJournal/deliver(_:to:schemaVersion:)``
/// stored it (see the journal's Inbox section), or in none: so, when the loop propagates
/// contexts (`LoopConfiguration.serviceContext`), the effects it causes here belong to the
/// sender's trace. Headers another tool garbled are logged at warning level; the event is
/// relayed all the same.
public struct InboxRelay<State: Codable & Sendable, Event: Codable & Sendable>: Service {
    let loop: DurableLoop<State, Event>
    let journal: PostgresJournal
    let pollEvery: Duration

    /// A relay of `loop`'s inbox in `journal`.
    ///
    /// - Parameters:
    ///   - loop: The loop the inbox's events go to; this node must own it.
    ///   - journal: The journal whose inbox table to read.
    ///   - pollEvery: How often to read the inbox without a notification.
    public init(loop: DurableLoop<State, Event>, journal: PostgresJournal, pollEvery: Duration = .seconds(1)) {
        self.loop = loop
        self.journal = journal
        self.pollEvery = pollEvery
    }

    public func run() async throws {
        let pump = Pump()
        let relay = self
        try? await cancelWhenGracefulShutdown {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await relay.journal.client.withConnection { connection in
                        try await connection.listen(on: PostgresJournal.inboxChannel) { notifications in
                            await pump.run(relay.drain)
                            for try await notification in notifications where notification.payload == relay.loop.id {
                                await pump.run(relay.drain)
                            }
                        }
                    }
                }
                group.addTask { await relay.loop.waitUntilStopped() }
                group.addTask {
                    while relay.loop.isRunning {
                        try await Task.sleep(for: relay.pollEvery)
                        await pump.run(relay.drain)
                    }
                }
                // Whichever ends first (the loop stopped, the connection failed) ends the relay.
                _ = try await group.next()
                group.cancelAll()
            }
        }
    }

    /// Journals every waiting entry, oldest first.
    @Sendable
    func drain() async {
        do {
            while loop.isRunning {
                let entries = try await journal.inbox(loop: loop.id, limit: 100)
                if entries.isEmpty { return }
                for (id, record, headers) in entries {
                    let decoder = JSONDecoder()
                    decoder.userInfo[.durableSchemaVersion] = record.schemaVersion
                    if let event = try? decoder.decode(Event.self, from: Data(record.payload)) {
                        var context: ServiceContext?
                        switch journal.context(fromInbox: headers) {
                        case .none: context = nil
                        case .context(let extracted): context = extracted
                        case .unreadable(let found):
                            journal.logger.warning(
                                "durable loop '\(loop.id)': inbox entry \(id) has unreadable trace headers ('\(found)'); relayed without its sender's context")
                        }
                        try await ServiceContext.$current.withValue(context) { _ = try await loop.sendAndWait(event) }
                    } else {
                        journal.logger.error("durable loop '\(loop.id)': inbox entry \(id) cannot be decoded; deleted")
                    }
                    // Journaled: delete it even if the relay is being cancelled meanwhile, or
                    // the next owner would journal it a second time.
                    try await Task { [journal] in try await journal.removeFromInbox(id) }.value
                }
            }
        } catch {
            if loop.isRunning { journal.logger.warning("durable loop '\(loop.id)': relaying the inbox failed, will retry: \(error)") }
        }
    }
}

/// Runs one drain at a time; a request while one runs makes it run once more after.
actor Pump {
    private var running = false
    private var again = false

    func run(_ body: @Sendable () async -> Void) async {
        if running {
            again = true
            return
        }
        running = true
        repeat {
            again = false
            await body()
        } while again
        running = false
    }
}
#endif
