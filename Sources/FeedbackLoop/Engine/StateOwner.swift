import Instrumentation

/// What a feedback becomes inside a running loop: called with every state, in order, and the
/// event that produced it (`nil` for the initial state). It keeps its own memory (the last query,
/// the effects it runs) and starts and cancels effects through its ``LoopDoor``.
@usableFromInline
typealias Reactor<State: Sendable, Event: Sendable> = (State, Event?, LoopDoor<State, Event>) -> Void

/// The single owner of a loop's state: the state itself, the reducer, the running feedbacks and
/// the observers. All three backends drive the same owner; only who holds it differs (the
/// drain-role thread for `callback`, the actor for `actor`, the host task for `stream`). It is
/// never touched concurrently, which is why it needs no lock and is not `Sendable` — and why its
/// properties opt out of run-time exclusivity checks, which W2 (ping-pong) paid for nothing: only
/// the drain-role holder ever touches them, one access at a time.
@usableFromInline
final class StateOwner<State: Sendable, Event: Sendable> {
    @exclusivity(unchecked) @usableFromInline var state: State
    @usableFromInline let reduce: @Sendable (inout State, Event) -> Void
    /// The running feedbacks, in order; `nil` when the loop has none or has stopped.
    @exclusivity(unchecked) @usableFromInline var reactors: LoopReactors<State, Event>?
    @exclusivity(unchecked) @usableFromInline var observers = ObserverList<State>()
    /// The queue buffer the drain loop swaps with the shared queue, kept to reuse its capacity.
    @exclusivity(unchecked) @usableFromInline var spare: [QueueItem<State, Event>] = []
    /// Counts since the last batch was published.
    @exclusivity(unchecked) @usableFromInline var reduced = 0
    @exclusivity(unchecked) @usableFromInline var droppedFromCancelledEffects = 0
    /// Whether the last second look of a backend that yields before releasing the drain role
    /// (``LoopEngine/drainPass(_:first:releaseWhenEmpty:budget:)``) found events: while it does
    /// not, a wake-up that found the queue empty releases the role at once.
    @exclusivity(unchecked) @usableFromInline var secondLookPays = true

    @inlinable
    init(initial: State, reduce: @escaping @Sendable (inout State, Event) -> Void, feedbacks: [Feedback<State, Event>]) {
        self.state = initial
        self.reduce = reduce
        self.reactors = LoopReactors.make(feedbacks[...])
    }

    /// Handles one queue item. Runs only in the drain role.
    @inlinable
    func process(_ item: QueueItem<State, Event>, engine: LoopEngine<State, Event>) {
        switch item {
        case .event(let event, let handle):
            receive(event, from: handle, engine: engine)
        case .submit(let event, let reply):
            answer(event, reply, engine: engine)
        case .traced(let event, let cause):
            processTraced(event, cause, engine: engine)
        case .start:
            // The initial state has no cause: what its effects start with is no caller's.
            engine.cause?.context = nil
            lendState { state in runReactors(state, nil, engine: engine) }
        case .addObserver(let observer):
            lendState { observer.onState($0) }
            observers.append(observer)
        case .removeObserver(let id):
            observers.remove(id: id)
        }
    }

    /// An event from ``Loop/send(_:)`` (no handle) or from an effect, which may have been
    /// cancelled since it was sent, or belong to a child feature that has gone since (see
    /// ``ChildLife``). Runs only in the drain role.
    /// An event of a loop that propagates `ServiceContext`: its context is the cause of what the
    /// feedbacks start while it is reduced. Out of line, so that ``process(_:engine:)`` stays
    /// small enough to be inlined into the drain of every other loop.
    @inlinable
    @inline(never)
    func processTraced(_ event: Event, _ cause: EventCause<State>, engine: LoopEngine<State, Event>) {
        if let handle = cause.handle, handle.isSilenced {
            // Reported in the event's context, as every drop of a loop that propagates.
            ServiceContext.$current.withValue(cause.context) { dropSilenced(event, engine: engine) }
            return
        }
        guard let step = engine.instrumentation?.hooks.contexts?.step else {
            stepTraced(event, cause, in: cause.context, engine: engine)
            return
        }
        step(event, cause.context) { context in stepTraced(event, cause, in: context, engine: engine) }
    }

    /// A step of a loop that propagates, whose effects take `context` as their cause.
    @inlinable
    func stepTraced(_ event: Event, _ cause: EventCause<State>, in context: ServiceContext?, engine: LoopEngine<State, Event>) {
        engine.cause?.context = context
        if let reply = cause.reply {
            answer(event, reply, engine: engine)
        } else {
            step(event, engine: engine)
        }
    }

    /// A ``Loop/sendAndWait(_:)`` event: reduced, then its caller answered.
    @inlinable
    func answer(_ event: Event, _ reply: UnsafeContinuation<State, any Error>, engine: LoopEngine<State, Event>) {
        step(event, engine: engine)
        // Publish before replying, so that a caller who got this state back never reads an
        // older one from `Loop.state` or finds its event missing from `Loop.statistics`.
        engine.publish(self)
        reply.resume(returning: state)
    }

    @inlinable
    func receive(_ event: Event, from handle: EffectHandle?, engine: LoopEngine<State, Event>) {
        if let handle, handle.isSilenced {
            dropSilenced(event, engine: engine)
            return
        }
        step(event, engine: engine)
    }

    /// Out of line, so that `receive` stays small enough to be inlined into every drain with the
    /// step (W1 and W2 on `callback` paid for two calls otherwise).
    @inlinable
    @inline(never)
    func dropSilenced(_ event: Event, engine: LoopEngine<State, Event>) {
        droppedFromCancelledEffects &+= 1
        engine.instrumentation?.hooks.onDrop?(event, .fromCancelledEffect)
    }

    /// The counts since the last publish, which start again from zero.
    @inlinable
    func takeCounts() -> (reduced: Int, dropped: Int) {
        defer {
            reduced = 0
            droppedFromCancelledEffects = 0
        }
        return (reduced, droppedFromCancelledEffects)
    }

    @inlinable
    func step(_ event: Event, engine: LoopEngine<State, Event>) {
        if let onTransition = engine.instrumentation?.hooks.onTransition {
            let before = state
            reduce(&state, event)
            onTransition(before, event, state)
        } else {
            reduce(&state, event)
        }
        reduced &+= 1
        lendState { state in
            runReactors(state, event, engine: engine)
            observers.forEachObserver { $0.onState(state) }
        }
    }

    /// Shows every feedback a state and the event that produced it.
    ///
    /// The chain is borrowed, not retained (a retain and a release of its head per event
    /// otherwise). `reactors` holds the chain through the call: only
    /// ``endObserversAndFeedbacks()`` changes it, in the teardown that takes the drain role, which
    /// the caller holds until the feedbacks return — whatever they send or stop is queued or left
    /// to the holder.
    @inlinable
    @inline(__always)
    func runReactors(_ state: State, _ event: Event?, engine: LoopEngine<State, Event>) {
        guard let head = reactors else { return }
        Unmanaged.passUnretained(head)._withUnsafeGuaranteedRef { $0.run(state, event, engine) }
    }

    /// Calls `body` with the state, moved out of the state's owner for the call and back after it.
    ///
    /// Passing the stored property itself to a feedback or an observer copies it, a retain and a
    /// release for every reference the state holds, per call: the compiler cannot prove that the
    /// callee leaves the property alone. A local nobody else can reach is lent as it is (the
    /// `keyed-children` workload measures it). Nothing reads `state` while it is out:
    /// only the drain-role holder touches the state's owner, and it is inside this call; the feedbacks
    /// and observers in `body` see the lent value, and whatever they send is queued, not reduced.
    @inlinable
    func lendState<Result>(_ body: (State) -> Result) -> Result {
        withUnsafeMutablePointer(to: &state) { storage in
            let lent = storage.move()
            let result = body(lent)
            storage.initialize(to: consume lent)
            return result
        }
    }

    /// The loop stopped: observers hear it once, and feedbacks (with whatever they captured) go.
    @inlinable
    func endObserversAndFeedbacks() {
        let observers = self.observers
        self.observers = ObserverList()
        reactors = nil
        for observer in observers { observer.onStop?() }
    }
}

/// A loop's running feedbacks, one link each, in order, each knowing its position in the loop's
/// `feedbacks` (which names its effects).
///
/// Links rather than an array: a closure taken out of an array (or any buffer) is retained and
/// released around its call, since the call might replace the element, while one in a `let` of
/// an object the caller holds is called as it is — two atomic reference counts per feedback per
/// event. A child's feedbacks keep the same shape (``ReactorChain``), but share one door, where
/// each of these makes its own.
@usableFromInline
final class LoopReactors<State: Sendable, Event: Sendable> {
    @usableFromInline let reactor: Reactor<State, Event>
    @usableFromInline let feedback: Int
    @usableFromInline let next: LoopReactors?

    @inlinable
    init(_ reactor: @escaping Reactor<State, Event>, feedback: Int, next: LoopReactors?) {
        self.reactor = reactor
        self.feedback = feedback
        self.next = next
    }

    /// The running feedbacks of `feedbacks`, made in order. Each reactor goes from its feedback
    /// straight into its link: passed through an array (or any generic code) on the way, it
    /// would be stored behind one more reabstraction thunk, called on every step.
    @inlinable
    static func make(_ feedbacks: ArraySlice<Feedback<State, Event>>) -> LoopReactors? {
        guard let first = feedbacks.first else { return nil }
        let reactor = first.makeReactor()
        return LoopReactors(reactor, feedback: feedbacks.startIndex, next: make(feedbacks.dropFirst()))
    }

    /// Calls this link's feedback, then the ones after it. Inlined into the step, so that a loop
    /// with one feedback makes no call of its own for it.
    @inlinable
    @inline(__always)
    func run(_ state: State, _ event: Event?, _ engine: LoopEngine<State, Event>) {
        reactor(state, event, LoopDoor(engine: engine, feedback: feedback))
        next?.runOutOfLine(state, event, engine)
    }

    /// ``run(_:_:_:)`` for the links after the first.
    @inlinable
    @inline(never)
    func runOutOfLine(_ state: State, _ event: Event?, _ engine: LoopEngine<State, Event>) {
        run(state, event, engine)
    }
}

/// A running feedback's memory (its last query, the effects it runs), touched only by the
/// drain-role holder. A class with an unchecked property rather than captured `var`s, because
/// captured `var`s of an escaping closure pay a run-time exclusivity check on every access.
@usableFromInline
final class ReactorMemory<Value> {
    @exclusivity(unchecked) @usableFromInline var value: Value

    @inlinable
    init(_ value: Value) {
        self.value = value
    }
}
