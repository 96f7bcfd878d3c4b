import FeedbackLoopServices

struct Orders: Sendable { var placed: [String] = [] }
enum OrderEvent: Sendable { case placed(String) }

let logger = Logger(label: "orders")
let configuration = LoopConfiguration(
    label: "orders",
    logger: logger,                                                 // the loop's logs, and the service's
    instruments: [LoopMetrics(label: "orders")]                     // the loop's metrics, and the service's
)
let loop = Loop(initial: Orders(), reduce: { (orders: inout Orders, event: OrderEvent) in
    switch event { case .placed(let order): orders.placed.append(order) }
}, configuration: configuration)

let orders = LoopService(loop: loop, gracePeriod: .seconds(5)) { report in
    logger.info("orders stopped: \(report.ending), \(report.finalState.placed.count) placed")
}
let group = ServiceGroup(services: [orders], gracefulShutdownSignals: [.sigterm], logger: logger)
async let running: Void = group.run()                               // add your HTTP server to `services`

// In a request handler:
let state = try await orders.sendAndWait(.placed("espresso"))
print(state.placed)

await group.triggerGracefulShutdown()                               // what SIGTERM does
try await running
