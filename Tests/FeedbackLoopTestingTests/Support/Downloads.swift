import FeedbackLoop
import FeedbackLoopTesting
import Synchronization

/// Downloads that run side by side, one effect per id, each finishing when the test releases it:
/// the test decides the order their events arrive in.
enum Downloads {
    struct State: Equatable, Sendable {
        var pending: Set<Int> = []
        var done: Set<Int> = []
    }

    enum Event: Equatable, Sendable {
        case download(Set<Int>)
        case downloaded(Int)
        case noise
    }

    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .download(let ids): state.pending.formUnion(ids)
        case .downloaded(let id):
            state.pending.remove(id)
            state.done.insert(id)
        case .noise: break
        }
    }

    static func feedbacks(_ releases: Releases) -> [Feedback<State, Event>] {
        [
            .requests({ $0.pending }) { id in
                .run { send in
                    await releases.wait(for: id)
                    send(.downloaded(id))
                }
            }
            .labeled("downloads")
        ]
    }

    /// Per-id one-shot signals: `wait(for:)` suspends until `release(_:)` of that id, or returns
    /// at once if it was released already.
    final class Releases: Sendable {
        private let state = Lock<(released: Set<Int>, waiters: [Int: [CheckedContinuation<Void, Never>]])>(([], [:]))

        func release(_ id: Int) {
            let waiters = state.withLock { state in
                state.released.insert(id)
                return state.waiters.removeValue(forKey: id) ?? []
            }
            for waiter in waiters { waiter.resume() }
        }

        func wait(for id: Int) async {
            await withCheckedContinuation { waiter in
                let released = state.withLock { state -> Bool in
                    if !state.released.contains(id) { state.waiters[id, default: []].append(waiter) }
                    return state.released.contains(id)
                }
                if released { waiter.resume() }
            }
        }
    }
}
