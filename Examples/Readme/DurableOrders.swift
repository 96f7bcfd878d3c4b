import FeedbackLoopDurable
import Foundation

struct Orders: Codable, Sendable { var placed: [String] = []; var toConfirm: String? }
enum OrderEvent: Codable, Sendable { case place(String), confirmed(String) }

func reduce(_ orders: inout Orders, _ event: OrderEvent) {
    switch event {
    case .place(let order): orders.placed.append(order); orders.toConfirm = order
    case .confirmed: orders.toConfirm = nil
    }
}

func feedbacks(_ context: DurableContext) -> [Feedback<Orders, OrderEvent>] {
    [.skippingRepeated({ $0.toConfirm }) { order in
        .run { send in                                              // runs again after a crash: at least once
            let key = try context.idempotencyKey(feedback: "confirm", query: order)
            try await mailer.confirm(order, idempotencyKey: key.stableKey)
            send(.confirmed(order))                                 // journaled too, like every event
        }
    }]
}

let path = FileManager.default.temporaryDirectory.appending(path: "orders-\(getpid()).sqlite").path
let journal = try SQLiteJournal(path: path)                         // the embedded store: a file, nothing to set up
let first = try await DurableLoop(id: "customer-42", journal: journal, initial: Orders(),
                                  reduce: reduce, feedbacks: feedbacks)
try await first.sendAndWait(.place("espresso"))                     // committed before it acts, then reduced
await first.stop()                                                  // or the process dies: the file outlives it

let recovered = try await DurableLoop(id: "customer-42", journal: try SQLiteJournal(path: path),
                                      initial: Orders(), reduce: reduce, feedbacks: feedbacks)
print(recovered.state.placed, recovered.recoveredSequence)          // ["espresso"] 1 (or 2, if confirmed in time)
await recovered.stop()
// snippet.hide

/// A stand-in for a mail service that dedupes on the key.
enum mailer {
    static func confirm(_ order: String, idempotencyKey: String) async throws {}
}

try? FileManager.default.removeItem(atPath: path)
