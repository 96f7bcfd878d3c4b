import FeedbackLoop
@preconcurrency import OpenCombine

/// The peer: the design FeedbackLoop is most often compared with, RxFeedback's and
/// CombineFeedback's `system` operator, written here from CombineFeedback's published semantics on
/// OpenCombine 0.14 (not copied from either project) and run through the same scenarios.
///
/// The state is a stream of `(State, Event?)`: the state and the event that produced it (`nil` for
/// the initial state). A ``System`` publisher, when subscribed, creates an `EventQueue`: every
/// event, external or from a feedback, is enqueued there tagged with the token of whoever sent it,
/// and drained on a scheduler by one thread at a time, which folds it into the state (the `scan` of
/// the design) and sends the pair through a `CurrentValueSubject` that multicasts it to the
/// subscriber and to every feedback. A feedback is a transform of that stream into events handed to
/// the queue; `skippingRepeated` and `lensing` start an effect per query and keep only the latest
/// (`switchToLatest` cancels the previous one and the queue drops the events it had not yet
/// reduced); `requests` runs an effect per request in a set and cancels each when it leaves the set.
/// A send from inside a reducer or an effect is queued, never recursed into.
public enum CombineSystem {
    /// Who sent an event: each effect subscription gets a token of its own, so that cancelling the
    /// effect can drop the events it had enqueued and the queue had not yet reduced.
    public final class Token: Sendable {
        public init() {}
    }

    /// Where a feedback's events go: the system's `EventQueue`.
    public class FeedbackEventConsumer<Event>: @unchecked Sendable {
        // @unchecked: abstract; the one subclass, `EventQueue`, keeps its mutable state behind its lock.
        /// Enqueues `event`, sent by the effect holding `token`; it is reduced after every event
        /// enqueued before it.
        public func process(_ event: Event, for token: Token) {
            preconditionFailure("FeedbackEventConsumer is abstract")
        }

        /// Drops the events of `token` that were enqueued and not yet reduced: called when the
        /// effect holding it is cancelled.
        public func unqueueAll(for token: Token) {
            preconditionFailure("FeedbackEventConsumer is abstract")
        }
    }

    /// A feedback: the stream of `(State, Event?)` in, events out to the consumer. The returned
    /// `Cancellable` stops the feedback and every effect it runs.
    public struct Feedback<State, Event> {
        let events: (AnyPublisher<(State, Event?), Never>, FeedbackEventConsumer<Event>) -> Cancellable

        public init(
            _ events: @escaping (AnyPublisher<(State, Event?), Never>, FeedbackEventConsumer<Event>) -> Cancellable
        ) {
            self.events = events
        }

        /// A feedback whose events are `events(states)`, all under one token: the form for a
        /// stream of events from outside (a UI, a socket).
        public static func custom(_ events: @escaping (AnyPublisher<State, Never>) -> AnyPublisher<Event, Never>) -> Feedback {
            Feedback { states, consumer in
                events(states.map { $0.0 }.eraseToAnyPublisher()).enqueue(to: consumer).sink { _ in }
            }
        }

        /// The general switch-latest feedback the others are made of, as in CombineFeedback:
        /// `transform` turns the stream of states (projected from the `(State, Event?)` pairs) into
        /// values; each value starts `effects(value)` and cancels the previous effect.
        public static func compacting<Value>(
            state transform: @escaping (AnyPublisher<State, Never>) -> AnyPublisher<Value, Never>,
            effects: @escaping (Value) -> AnyPublisher<Event, Never>
        ) -> Feedback {
            Feedback { states, consumer in
                transform(states.map { $0.0 }.eraseToAnyPublisher())
                    .map { effects($0).enqueue(to: consumer) }
                    .switchToLatest()
                    .sink { _ in }
            }
        }

        /// Starts `effects(query)` whenever the query changes to a new non-`nil` value, cancelling
        /// the effect of the previous query (switch-latest); a `nil` query runs nothing.
        public static func skippingRepeated<Query: Equatable>(
            _ query: @escaping (State) -> Query?,
            effects: @escaping (Query) -> AnyPublisher<Event, Never>
        ) -> Feedback {
            compacting(
                state: { $0.map(query).removeDuplicates().eraseToAnyPublisher() },
                effects: { $0.map(effects) ?? never() })
        }

        /// Starts `effects(query)` for every state whose query is not `nil`, repeated or not,
        /// cancelling the previous effect (switch-latest); a `nil` query cancels it and runs nothing.
        public static func lensing<Query>(
            _ query: @escaping (State) -> Query?,
            effects: @escaping (Query) -> AnyPublisher<Event, Never>
        ) -> Feedback {
            compacting(state: { $0.map(query).eraseToAnyPublisher() }, effects: { $0.map(effects) ?? never() })
        }

        /// Runs `effects(request)` for every request in the set the state asks for: a request that
        /// enters the set starts its effect, one that leaves it cancels its effect, one that stays
        /// keeps its effect running (RxFeedback's `react(requests:)`).
        public static func requests<Request: Hashable>(
            _ query: @escaping (State) -> Set<Request>,
            effects: @escaping (Request) -> AnyPublisher<Event, Never>
        ) -> Feedback {
            Feedback { states, consumer in
                let running = RunningRequests<Request>()
                let subscription = states.map { query($0.0) }
                    .removeDuplicates()
                    .sink { requests in
                        running.update(to: requests) { effects($0).enqueue(to: consumer).sink { _ in } }
                    }
                return AnyCancellable {
                    subscription.cancel()
                    running.cancelAll()
                }
            }
        }

        private static func never() -> AnyPublisher<Event, Never> {
            Empty(completeImmediately: false).eraseToAnyPublisher()
        }
    }

    /// The effects a `requests` feedback runs, by request. Only the thread holding the system's
    /// drain role updates it; `cancelAll` may come from any thread (stop), hence the lock.
    final class RunningRequests<Request: Hashable>: @unchecked Sendable {
        // @unchecked: `state` is touched only inside its lock; no effect is started or cancelled
        // while it is held.
        private let state = Lock(Handed((effects: [Request: AnyCancellable](), stopped: false)))

        func update(to requests: Set<Request>, start: (Request) -> AnyCancellable) {
            let change = state.withLock { state -> Handed<(ended: [AnyCancellable], new: [Request])> in
                if state.value.stopped { return Handed(([], [])) }
                let gone = state.value.effects.keys.filter { !requests.contains($0) }
                let ended = gone.compactMap { state.value.effects.removeValue(forKey: $0) }
                return Handed((ended, requests.filter { state.value.effects[$0] == nil }))
            }
            for effect in change.value.ended { effect.cancel() }
            for request in change.value.new {
                let effect = Handed(start(request))
                let stopped = state.withLock { state -> Bool in
                    if !state.value.stopped { state.value.effects[request] = effect.value }
                    return state.value.stopped
                }
                if stopped { effect.value.cancel() }
            }
        }

        func cancelAll() {
            let effects = state.withLock { state -> Handed<[AnyCancellable]> in
                state.value.stopped = true
                defer { state.value.effects = [:] }
                return Handed(Array(state.value.effects.values))
            }
            for effect in effects.value { effect.cancel() }
        }
    }

    /// A value handed across a lock's boundary or between threads that the design serialises:
    /// OpenCombine's types are not `Sendable`, the locks around them are what make them safe.
    struct Handed<Value>: @unchecked Sendable {
        // @unchecked: every `Handed` is either kept inside a `Lock` or moved out of one to the
        // single thread that then owns it.
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    /// The `system` operator: the stream of `(State, Event?)`, starting with `(initial, nil)`, that
    /// the feedbacks' events reduce to. Nothing runs until it is subscribed; each subscription is a
    /// system of its own with its own queue, as in both libraries, and cancelling it cancels every
    /// feedback and effect. Events are reduced on `scheduler`, one at a time.
    public struct System<State, Event, S: Scheduler>: Publisher {
        public typealias Output = (State, Event?)
        public typealias Failure = Never

        let initial: State
        let reduce: (inout State, Event) -> Void
        let scheduler: S
        let feedbacks: [Feedback<State, Event>]

        public func receive<Downstream: Subscriber>(subscriber: Downstream)
        where Downstream.Input == Output, Downstream.Failure == Never {
            let queue = EventQueue(initial: initial, reduce: reduce, scheduler: scheduler)
            // The subscriber first, so that it sees every state the feedbacks' first events produce.
            queue.states.handleEvents(receiveCancel: queue.stop).receive(subscriber: subscriber)
            queue.bootstrap(feedbacks)
        }
    }

    public static func system<State, Event, S: Scheduler>(
        initial: State,
        reduce: @escaping (inout State, Event) -> Void,
        scheduler: S,
        feedbacks: [Feedback<State, Event>]
    ) -> System<State, Event, S> {
        System(initial: initial, reduce: reduce, scheduler: scheduler, feedbacks: feedbacks)
    }

    /// The serialising event queue: events from any thread are appended under a lock; the thread
    /// that finds the queue idle schedules a drain on the scheduler, which reduces every queued
    /// event in order and publishes each `(state, event)` before taking the next. An event sent
    /// while draining (a synchronous answer, another thread's send) is appended, not recursed into.
    final class EventQueue<State, Event, S: Scheduler>: FeedbackEventConsumer<Event>, @unchecked Sendable {
        // @unchecked: `pending` is touched only inside its lock; `state` and `feedbacks` only by
        // the one thread holding the drain role (`pending.draining`) or, for `feedbacks`, by
        // `bootstrap` before any event can be drained and by `stop` after `pending.stopped` is set.
        private struct Pending {
            var events: [(event: Event, token: Token)] = []
            var head = 0
            var draining = false
            var stopped = false
        }

        private let pending = Lock(Pending())
        private var state: State
        private let reduce: (inout State, Event) -> Void
        private let scheduler: S
        private let feedbacks = Lock<[Cancellable]>([])
        let states: CurrentValueSubject<(State, Event?), Never>

        init(initial: State, reduce: @escaping (inout State, Event) -> Void, scheduler: S) {
            state = initial
            self.reduce = reduce
            self.scheduler = scheduler
            states = CurrentValueSubject((initial, nil))
        }

        func bootstrap(_ feedbacks: [Feedback<State, Event>]) {
            let observed = states.eraseToAnyPublisher()
            for feedback in feedbacks {
                let cancellable = feedback.events(observed, self)
                let stopped = pending.withLock { $0.stopped }
                if stopped {
                    cancellable.cancel()
                } else {
                    self.feedbacks.withLock { $0.append(cancellable) }
                }
            }
        }

        override func process(_ event: Event, for token: Token) {
            let item = Handed((event: event, token: token))
            let drain = pending.withLock { pending -> Bool in
                if pending.stopped { return false }
                pending.events.append(item.value)
                if pending.draining { return false }
                pending.draining = true
                return true
            }
            if drain { scheduler.schedule { self.drain() } }
        }

        override func unqueueAll(for token: Token) {
            pending.withLock { pending in
                if pending.head < pending.events.count {
                    pending.events[pending.head...].removeAll { $0.token === token }
                }
            }
        }

        private func drain() {
            while let event = next()?.value {
                reduce(&state, event)
                states.send((state, event))
            }
        }

        private func next() -> Handed<Event>? {
            pending.withLock { pending -> Handed<Event>? in
                if !pending.stopped, pending.head < pending.events.count {
                    defer { pending.head += 1 }
                    return Handed(pending.events[pending.head].event)
                }
                pending.events.removeAll(keepingCapacity: true)
                pending.head = 0
                pending.draining = false
                return nil
            }
        }

        func stop() {
            let dropped = pending.withLock { pending -> Handed<[(event: Event, token: Token)]> in
                pending.stopped = true
                defer { pending.events = [] }
                return Handed(pending.events)
            }
            _ = dropped  // released here, outside the lock
            let cancellables = feedbacks.withLock { feedbacks -> [Cancellable] in
                defer { feedbacks = [] }
                return feedbacks
            }
            for cancellable in cancellables { cancellable.cancel() }
        }
    }

    /// A scheduler that runs an action at once on the calling thread unless another action is
    /// running (on any thread); then it queues it, and the thread already running actions runs it
    /// next. RxSwift's `CurrentThreadScheduler` and a serial queue drained by its caller, in one.
    public final class Trampoline: Scheduler, @unchecked Sendable {
        // @unchecked: `queue` is the only mutable state and is touched only inside its lock; the
        // actions it holds are run only by the one thread that holds the drain role.
        public typealias SchedulerTimeType = ImmediateScheduler.SchedulerTimeType
        public typealias SchedulerOptions = Never

        // @unchecked: an action is run exactly once, by the thread holding the drain role.
        private struct Action: @unchecked Sendable {
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
        // event queue's drain role.
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
            // External events are a feedback like any other, a subject's stream under one token:
            // RxFeedback's UI bindings and CombineFeedback's input feedback. Sending straight into
            // the queue measured 2,718 instructions per send, 15 % of the library's 18,083, so the
            // library's sends do go through a subject (Benchmarks/README.md, the peer).
            let external = Feedback<State, Event>.custom { _ in input.eraseToAnyPublisher() }
            let cancellable = CombineSystem.system(
                initial: initial, reduce: reduce, scheduler: Trampoline(), feedbacks: [external] + feedbacks
            )
            .sink { state, _ in
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

extension Publisher where Failure == Never {
    /// Hands every output to `consumer` under a token of its own, fresh per subscription; cancelling
    /// the subscription drops the outputs still queued and not yet reduced.
    ///
    /// CombineFeedback's `enqueue(to:)` operator, as published: the outputs leave through the
    /// consumer only, so the publisher it returns outputs `Never` — each output is flat-mapped to
    /// an `Empty` — and the feedback's `switchToLatest` and `sink` downstream see no value, only
    /// the subscription they cancel.
    func enqueue(to consumer: CombineSystem.FeedbackEventConsumer<Output>) -> AnyPublisher<Never, Never> {
        Deferred { () -> AnyPublisher<Never, Never> in
            let token = CombineSystem.Token()
            return self.handleEvents(
                receiveOutput: { consumer.process($0, for: token) },
                receiveCancel: { consumer.unqueueAll(for: token) }
            )
            .flatMap { _ in Empty<Never, Never>() }
            .eraseToAnyPublisher()
        }
        .eraseToAnyPublisher()
    }
}
