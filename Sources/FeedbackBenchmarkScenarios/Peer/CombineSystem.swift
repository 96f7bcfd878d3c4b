import FeedbackLoop
@preconcurrency import OpenCombine

/// The peer: the design FeedbackLoop is most often compared with, RxFeedback's and
/// CombineFeedback's `system` operator, written here from its published semantics on
/// OpenCombine 0.14 (not copied from either project) and run through the same scenarios.
///
/// The state is a stream: `system` merges every feedback's events, reduces them with `scan`,
/// pushes each new state into a subject the feedbacks watch, and emits it. A feedback is a
/// function from the stream of states to a stream of events; `skippingRepeated` maps the state to
/// its query, drops repeats, maps each query to an effect publisher and keeps only the latest
/// (`switchToLatest` cancels the previous effect). Events are delivered through a scheduler, as in
/// both libraries; here a thread-safe trampoline, so that an effect that answers synchronously
/// (ping-pong) is queued instead of recursing, and sends from several threads are serialised.
public enum CombineSystem {
    /// A feedback: the states in, the events out.
    public struct Feedback<State, Event> {
        let events: (AnyPublisher<State, Never>) -> AnyPublisher<Event, Never>

        public init(_ events: @escaping (AnyPublisher<State, Never>) -> AnyPublisher<Event, Never>) {
            self.events = events
        }

        /// Starts `effects(query)` whenever the query changes to a new non-`nil` value, cancelling
        /// the effect of the previous query (switch-latest); a `nil` query runs nothing.
        public static func skippingRepeated<Query: Equatable>(
            _ query: @escaping (State) -> Query?,
            effects: @escaping (Query) -> AnyPublisher<Event, Never>
        ) -> Feedback {
            Feedback { states in
                states.map(query)
                    .removeDuplicates()
                    .map { query -> AnyPublisher<Event, Never> in
                        query.map(effects) ?? Empty(completeImmediately: false).eraseToAnyPublisher()
                    }
                    .switchToLatest()
                    .eraseToAnyPublisher()
            }
        }
    }

    /// The `system` operator: the stream of states, starting with `initial`, that the feedbacks'
    /// events reduce to. Nothing runs until it is subscribed; each subscription is a system of its
    /// own, as in both libraries.
    public static func system<State, Event>(
        initial: State,
        reduce: @escaping (inout State, Event) -> Void,
        scheduler: Trampoline,
        feedbacks: [Feedback<State, Event>]
    ) -> AnyPublisher<State, Never> {
        Deferred { () -> AnyPublisher<State, Never> in
            let states = CurrentValueSubject<State, Never>(initial)
            let events = feedbacks.map { $0.events(states.eraseToAnyPublisher()) }
            // OpenCombine 0.14 has no `MergeMany`; `flatMap` over the sequence of event streams,
            // with unlimited demand, is the same merge.
            return Publishers.Sequence<[AnyPublisher<Event, Never>], Never>(sequence: events)
                .flatMap { $0 }
                .receive(on: scheduler)
                .scan(initial) { (state: State, event: Event) -> State in
                    var next = state
                    reduce(&next, event)
                    return next
                }
                .handleEvents(receiveOutput: { states.send($0) })
                .receive(on: scheduler)
                .prepend(initial)
                .eraseToAnyPublisher()
        }
        .eraseToAnyPublisher()
    }

    /// A scheduler that runs an action at once on the calling thread unless another action is
    /// running (on any thread); then it queues it, and the thread already running actions runs it
    /// next. RxSwift's `CurrentThreadScheduler` and a serial queue drained by its caller, in one:
    /// reentrant events are queued rather than recursed into, and several sending threads are
    /// serialised through one lock, like the `callback` backend's drain role.
    public final class Trampoline: Scheduler, @unchecked Sendable {
        // @unchecked: `queue` is the only mutable state and is touched only inside its lock; the
        // actions it holds are run only by the one thread that holds the drain role.
        public typealias SchedulerTimeType = ImmediateScheduler.SchedulerTimeType
        public typealias SchedulerOptions = Never

        private struct Action: @unchecked Sendable {
            // @unchecked: an action is run exactly once, by the thread holding the drain role.
            let run: () -> Void
        }

        private struct Queue {
            var draining = false
            var pending: [Action] = []
            var head = 0
        }

        private let queue = Lock(Queue())

        public init() {}

        public var now: SchedulerTimeType { ImmediateScheduler.shared.now }
        public var minimumTolerance: SchedulerTimeType.Stride { ImmediateScheduler.shared.minimumTolerance }

        public func schedule(options: Never?, _ action: @escaping () -> Void) {
            let first = Action(run: action)
            let drainHere = queue.withLock { queue -> Bool in
                if queue.draining {
                    queue.pending.append(first)
                    return false
                }
                queue.draining = true
                return true
            }
            guard drainHere else { return }
            var next: Action? = first
            while let action = next {
                action.run()
                next = queue.withLock { queue -> Action? in
                    if queue.head < queue.pending.count {
                        defer { queue.head += 1 }
                        return queue.pending[queue.head]
                    }
                    queue.pending.removeAll(keepingCapacity: true)
                    queue.head = 0
                    queue.draining = false
                    return nil
                }
            }
        }

        /// Time is not modelled, as in `ImmediateScheduler`: the action is scheduled now.
        public func schedule(
            after date: SchedulerTimeType, tolerance: SchedulerTimeType.Stride, options: Never?,
            _ action: @escaping () -> Void
        ) {
            schedule(options: nil, action)
        }

        /// Time is not modelled, as in `ImmediateScheduler`: the action runs once, now.
        public func schedule(
            after date: SchedulerTimeType, interval: SchedulerTimeType.Stride, tolerance: SchedulerTimeType.Stride,
            options: Never?, _ action: @escaping () -> Void
        ) -> Cancellable {
            schedule(options: nil, action)
            return AnyCancellable {}
        }
    }

    /// A running system with the surface the scenarios need: `send` from any thread, the latest
    /// state, the number of states reduced, and `stop`, which cancels the subscription and with it
    /// every running effect.
    public final class Loop<State: Sendable, Event: Sendable>: @unchecked Sendable {
        // @unchecked: `input` is a subject, which OpenCombine locks internally; `latest` and
        // `subscription` are behind locks; the system itself runs only on the thread holding the
        // trampoline's drain role.
        private let input = PassthroughSubject<Event, Never>()
        private let latest: Lock<(state: State, reduced: Int)>
        private let subscription = Lock<AnyCancellable?>(nil)

        /// `onState` sees every state the system emits, the initial one first, on the thread that
        /// reduced it.
        public init(
            initial: State,
            reduce: @escaping (inout State, Event) -> Void,
            feedbacks: [Feedback<State, Event>] = [],
            onState: (@Sendable (State) -> Void)? = nil
        ) {
            let latest = Lock((state: initial, reduced: -1))
            self.latest = latest
            let input = input
            let external = Feedback<State, Event> { _ in input.eraseToAnyPublisher() }
            let cancellable = CombineSystem.system(
                initial: initial, reduce: reduce, scheduler: Trampoline(), feedbacks: [external] + feedbacks
            )
            .sink { state in
                latest.withLock { $0 = (state, $0.reduced + 1) }
                onState?(state)
            }
            subscription.withLock { $0 = cancellable }
        }

        public func send(_ event: Event) {
            input.send(event)
        }

        /// The latest state the system emitted.
        public var state: State { latest.withLock { $0.state } }

        /// States emitted after the initial one: one per event reduced.
        public var reduced: Int { latest.withLock { $0.reduced } }

        /// Cancels the system: every running effect is cancelled before this returns.
        public func stop() {
            let cancellable = subscription.withLock { subscription -> AnyCancellable? in
                defer { subscription = nil }
                return subscription
            }
            cancellable?.cancel()
        }
    }
}
