import FeedbackExamples
import FeedbackLoop
import FeedbackLoopTesting
import Testing

/// Many orders, each a feature of its own, at a desk that limits how many are at the kitchen.
@Suite("Order desk: keyed orders with a limit in flight")
struct OrderDeskTests {
    typealias State = OrderDesk.State

    func makeLoop(_ backend: Backend, kitchen: HeldKitchen, limit: Int = 2) -> TestLoop<State, OrderDesk.Event> {
        TestLoop(
            initial: State(limit: limit),
            reduce: OrderDesk.reduce,
            feedbacks: OrderDesk.feedbacks(.init(service: kitchen)),
            backend: backend, timeout: exampleTimeout)
    }

    static func submitting(_ items: [String], attempt: Int = 1) -> Order.State {
        Order.State(items: items, status: .submitting(Order.Submission(items: items, attempt: attempt)), attempts: attempt)
    }

    @Test(arguments: Backend.allCases)
    func theDeskKeepsAtMostTheLimitInFlight(backend: Backend) async {
        let kitchen = HeldKitchen()
        let loop = makeLoop(backend, kitchen: kitchen)
        await loop.send(.place(["soup"])) {
            $0.orders[id: 1] = Self.submitting(["soup"]); $0.nextID = 2; $0.inFlight = [1]
        }
        await loop.send(.place(["bread"])) {
            $0.orders[id: 2] = Self.submitting(["bread"]); $0.nextID = 3; $0.inFlight = [1, 2]
        }
        await loop.send(.place(["salad"])) {
            $0.orders[id: 3] = Order.State(items: ["salad"]); $0.nextID = 4; $0.queue = [3]
        }
        await kitchen.calls.waitForCalls(2)
        // Each submission runs in a task of its own: the kitchen may see the later one first.
        #expect(Set(kitchen.calls.requests) == [["soup"], ["bread"]], "the third waits for room")

        kitchen.calls.answer(["soup"], with: "T1")
        await loop.receive(.order(1, .confirmed(attempt: 1, ticket: "T1"))) {
            $0.orders[id: 1]?.status = .confirmed(ticket: "T1")
            $0.orders[id: 3] = Self.submitting(["salad"])
            $0.queue = []
            $0.inFlight = [2, 3]
        }
        await kitchen.calls.waitForCalls(3)
        #expect(kitchen.calls.requests.last == ["salad"])
        kitchen.calls.answer(["bread"], with: "T2")
        await loop.receive(.order(2, .confirmed(attempt: 1, ticket: "T2"))) {
            $0.orders[id: 2]?.status = .confirmed(ticket: "T2"); $0.inFlight = [3]
        }
        kitchen.calls.answer(["salad"], with: "T3")
        await loop.receive(.order(3, .confirmed(attempt: 1, ticket: "T3"))) {
            $0.orders[id: 3]?.status = .confirmed(ticket: "T3"); $0.inFlight = []
        }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func cancellingAnOrderCancelsItsSubmissionAndLetsTheNextGo(backend: Backend) async {
        let kitchen = HeldKitchen()
        let loop = makeLoop(backend, kitchen: kitchen, limit: 1)
        await loop.send(.place(["soup"])) {
            $0.orders[id: 1] = Self.submitting(["soup"]); $0.nextID = 2; $0.inFlight = [1]
        }
        await loop.send(.place(["bread"])) {
            $0.orders[id: 2] = Order.State(items: ["bread"]); $0.nextID = 3; $0.queue = [2]
        }
        await kitchen.calls.waitForCalls(1)
        await loop.send(.cancel(1)) {
            $0.orders[id: 1] = nil
            $0.orders[id: 2] = Self.submitting(["bread"])
            $0.queue = []
            $0.inFlight = [2]
        }
        await kitchen.calls.waitForCancellation(of: 0)
        await kitchen.calls.waitForCalls(2)
        kitchen.calls.answer(1, with: "T1")
        await loop.receive(.order(2, .confirmed(attempt: 1, ticket: "T1"))) {
            $0.orders[id: 2]?.status = .confirmed(ticket: "T1"); $0.inFlight = []
        }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func aCancelledOrdersLateAnswerNeverReachesTheDesk(backend: Backend) async {
        let kitchen = HeldKitchen(honoursCancellation: false)
        let loop = makeLoop(backend, kitchen: kitchen)
        await loop.send(.place(["soup"])) {
            $0.orders[id: 1] = Self.submitting(["soup"]); $0.nextID = 2; $0.inFlight = [1]
        }
        await kitchen.calls.waitForCalls(1)
        await loop.send(.cancel(1)) {
            $0.orders[id: 1] = nil; $0.inFlight = []
        }
        await kitchen.calls.waitForCancellation(of: 0)
        kitchen.calls.answer(0, with: "T1")
        await loop.loop.waitUntilIdle()
        #expect(loop.loop.state == State(limit: 2, nextID: 2))
        #expect(loop.loop.statistics.eventsDroppedFromCancelledEffects == 1)
        #expect(loop.loop.statistics.eventsOrphaned == 0, "dropped as a cancelled effect's event, before reaching the reducer")
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func twoOrdersWithTheSameItemsAreTwoIndependentSubmissions(backend: Backend) async {
        let kitchen = HeldKitchen()
        let loop = makeLoop(backend, kitchen: kitchen)
        await loop.send(.place(["soup"])) {
            $0.orders[id: 1] = Self.submitting(["soup"]); $0.nextID = 2; $0.inFlight = [1]
        }
        // The twins' calls carry the same items: order 1's must be call 0 before order 2 is
        // placed, since two effects' tasks reach the kitchen in whichever order they are run.
        await kitchen.calls.waitForCalls(1)
        await loop.send(.place(["soup"])) {
            $0.orders[id: 2] = Self.submitting(["soup"]); $0.nextID = 3; $0.inFlight = [1, 2]
        }
        await kitchen.calls.waitForCalls(2)
        #expect(kitchen.calls.requests == [["soup"], ["soup"]])

        kitchen.calls.answer(1, with: "T-second")
        await loop.receive(.order(2, .confirmed(attempt: 1, ticket: "T-second"))) {
            $0.orders[id: 2]?.status = .confirmed(ticket: "T-second"); $0.inFlight = [1]
        }
        await loop.send(.cancel(2)) { $0.orders[id: 2] = nil }
        #expect(!kitchen.calls.isCancelled(0), "removing one twin leaves the other's submission running")
        kitchen.calls.answer(0, with: "T-first")
        await loop.receive(.order(1, .confirmed(attempt: 1, ticket: "T-first"))) {
            $0.orders[id: 1]?.status = .confirmed(ticket: "T-first"); $0.inFlight = []
        }
        await loop.finish()
    }

    @Test(arguments: Backend.allCases)
    func aFailedOrderCanBeRetried(backend: Backend) async {
        let loop = TestLoop(
            initial: State(limit: 1),
            reduce: OrderDesk.reduce,
            feedbacks: OrderDesk.feedbacks(.init(service: FakeOrderService(failing: 1))),
            backend: backend, timeout: exampleTimeout)
        await loop.send(.place(["soup"])) {
            $0.orders[id: 1] = Self.submitting(["soup"]); $0.nextID = 2; $0.inFlight = [1]
        }
        await loop.receive(where: { if case .order(1, .failed(attempt: 1, _)) = $0 { true } else { false } }) {
            $0.orders[id: 1]?.status = .failed(String(describing: FakeServiceError(operation: "submit"))); $0.inFlight = []
        }
        await loop.send(.order(1, .retry)) {
            $0.orders[id: 1] = Self.submitting(["soup"], attempt: 2); $0.inFlight = [1]
        }
        await loop.receive(.order(1, .confirmed(attempt: 2, ticket: "T1"))) {
            $0.orders[id: 1]?.status = .confirmed(ticket: "T1"); $0.inFlight = []
        }
        await loop.finish()
    }
}
