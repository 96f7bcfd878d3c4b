import FeedbackLoop
import Dispatch
import FeedbackExamples
import Synchronization
import Testing

/// Service calls that wait until the test answers them, one by one: for tests that need a
/// request in flight at a precise moment, or an answer that arrives after its effect was
/// cancelled.
///
/// With `honoursCancellation` a cancelled call throws `CancellationError` at once, as a real
/// client would; without, it keeps waiting for the test's answer, like a client that ignores
/// cancellation and answers late.
final class HeldCalls<Request: Sendable, Answer: Sendable>: Sendable {
    private struct Call {
        var request: Request
        var continuation: CheckedContinuation<Answer, any Error>?
        /// An answer given after the call was counted but before it parked its continuation.
        var early: Answer?
        var answered = false
        var cancelled = false
    }

    private struct Storage {
        var calls: [Call] = []
        var waiters: [(id: Int, condition: @Sendable ([Call]) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
        var nextWaiter = 0

        mutating func ready() -> [CheckedContinuation<Void, Never>] {
            let calls = self.calls
            let ready = waiters.filter { $0.condition(calls) }.map(\.continuation)
            waiters.removeAll { $0.condition(calls) }
            return ready
        }
    }

    private let storage = Lock(Storage())
    let honoursCancellation: Bool

    init(honoursCancellation: Bool = true) {
        self.honoursCancellation = honoursCancellation
    }

    /// The requests made so far, in order.
    var requests: [Request] { storage.withLock { $0.calls.map(\.request) } }

    /// Whether the call at `index` was cancelled.
    func isCancelled(_ index: Int) -> Bool { storage.withLock { $0.calls.indices.contains(index) && $0.calls[index].cancelled } }

    /// Waits for the answer the test gives with ``answer(_:with:)``.
    func call(_ request: Request) async throws -> Answer {
        let (index, ready) = storage.withLock { storage in
            storage.calls.append(Call(request: request))
            return (storage.calls.count - 1, storage.ready())
        }
        for waiter in ready { waiter.resume() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let settled = storage.withLock { storage -> Result<Answer, any Error>? in
                    if storage.calls[index].cancelled && honoursCancellation { return .failure(CancellationError()) }
                    if let early = storage.calls[index].early.take() { return .success(early) }
                    storage.calls[index].continuation = continuation
                    return nil
                }
                if let settled { continuation.resume(with: settled) }
            }
        } onCancel: {
            let (continuation, ready) = storage.withLock { storage in
                storage.calls[index].cancelled = true
                let continuation = honoursCancellation ? storage.calls[index].continuation.take() : nil
                return (continuation, storage.ready())
            }
            continuation?.resume(throwing: CancellationError())
            for waiter in ready { waiter.resume() }
        }
    }

    /// Answers the call at `index`. Returns whether it was still waiting: a call counted by
    /// ``waitForCalls(_:limit:sourceLocation:)`` may not have parked yet, and then gets the answer
    /// as it parks.
    @discardableResult
    func answer(_ index: Int, with answer: Answer) -> Bool {
        let (continuation, waiting) = storage.withLock { storage -> (CheckedContinuation<Answer, any Error>?, Bool) in
            guard storage.calls.indices.contains(index), !storage.calls[index].answered else { return (nil, false) }
            if let continuation = storage.calls[index].continuation.take() {
                storage.calls[index].answered = true
                return (continuation, true)
            }
            let parking = !storage.calls[index].cancelled || !honoursCancellation
            if parking {
                storage.calls[index].early = answer
                storage.calls[index].answered = true
            }
            return (nil, parking)
        }
        continuation?.resume(returning: answer)
        return waiting
    }

    /// Answers the first call made with `request` that is not answered yet; records a failure if
    /// there is none. For calls whose order the test does not fix: effects run in tasks of their
    /// own, and two started one after the other may reach the service in either order.
    @discardableResult
    func answer(_ request: Request, with answer: Answer, sourceLocation: SourceLocation = #_sourceLocation) -> Bool
    where Request: Equatable {
        let index = storage.withLock { storage in
            storage.calls.firstIndex { $0.request == request && !$0.answered }
        }
        guard let index else {
            Issue.record("no unanswered call with \(request) among \(requests)", sourceLocation: sourceLocation)
            return false
        }
        return self.answer(index, with: answer)
    }

    /// Returns once `count` calls have been made, or records a failure after `limit`.
    func waitForCalls(_ count: Int, limit: Duration = exampleTimeout, sourceLocation: SourceLocation = #_sourceLocation) async {
        await wait("\(count) calls", limit: limit, sourceLocation) { $0.count >= count }
    }

    /// Returns once the call at `index` has been cancelled, or records a failure after `limit`.
    func waitForCancellation(of index: Int, limit: Duration = exampleTimeout, sourceLocation: SourceLocation = #_sourceLocation) async {
        await wait("the cancellation of call \(index)", limit: limit, sourceLocation) { $0.count > index && $0[index].cancelled }
    }

    /// The bound only turns a hang into a failure; a passing test never waits for the timer.
    private func wait(
        _ what: String,
        limit: Duration,
        _ sourceLocation: SourceLocation,
        until condition: @escaping @Sendable ([Call]) -> Bool
    ) async {
        await withCheckedContinuation { continuation in
            let id = storage.withLock { storage -> Int? in
                if condition(storage.calls) { return nil }
                storage.nextWaiter += 1
                storage.waiters.append((storage.nextWaiter, condition, continuation))
                return storage.nextWaiter
            }
            guard let id else { return continuation.resume() }
            let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                let expired = self.storage.withLock { storage -> CheckedContinuation<Void, Never>? in
                    guard let index = storage.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return storage.waiters.remove(at: index).continuation
                }
                guard let expired else { return }
                Issue.record("gave up waiting after \(limit) for \(what)", sourceLocation: sourceLocation)
                expired.resume()
            }
        }
    }
}

/// A kitchen whose submissions the test answers.
struct HeldKitchen: OrderService {
    let calls: HeldCalls<[String], String>

    init(honoursCancellation: Bool = true) {
        calls = HeldCalls(honoursCancellation: honoursCancellation)
    }

    func submit(_ items: [String]) async throws -> String {
        try await calls.call(items)
    }
}

/// A pharmacies service whose fetches the test answers; adding and deleting are not used.
struct HeldPharmacies: PharmaciesService {
    let fetches: HeldCalls<Void, [Pharmacy]>

    init(honoursCancellation: Bool = true) {
        fetches = HeldCalls(honoursCancellation: honoursCancellation)
    }

    func fetchPharmacies() async throws -> [Pharmacy] {
        try await fetches.call(())
    }

    func add(_ pharmacy: Pharmacy) async throws -> Pharmacy { pharmacy }
    func delete(_ pharmacy: Pharmacy) async throws {}
}

/// How long the examples' tests wait for an event, a call or idle before failing. The bound only
/// turns a hang into a failure (a passing test never waits for it); it is long because the whole
/// package's tests share two cores, and an effect's task can wait seconds for a thread while the
/// load tests run.
let exampleTimeout: Duration = .seconds(60)
