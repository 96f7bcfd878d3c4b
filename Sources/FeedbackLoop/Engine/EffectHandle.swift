import Instrumentation
import Synchronization

/// The identity and life of one running effect, shared by the feedback that started it, the
/// effect's ``Sink`` and the loop's registry of running effects.
///
/// Its status moves once, from running to finished or to cancelled, by compare-and-exchange, so
/// an effect is cancelled at most once and never both finished and cancelled.
@usableFromInline
final class EffectHandle: Sendable {
    @usableFromInline let id: UInt64
    @usableFromInline let feedback: Int
    /// A `.run` effect, whose work lasts until its task returns, even after it finished with
    /// ``Sink/finish(sending:)``; otherwise a `.callback` effect, whose work ends when it
    /// finishes or its cancellation has run.
    @usableFromInline let isTask: Bool
    @usableFromInline let status: Atomic<UInt8>
    /// The life of the child feature that started it, for an effect of a child lifted into a
    /// parent (see ``ChildLife``); `nil` for the loop's own feedbacks.
    @usableFromInline let life: ChildLife?
    /// The context the effect runs in, in a loop that propagates `ServiceContext` (see
    /// ``ServiceContextPropagation``): that of the step that started it, or the one the
    /// instrumentation derived from it (``LoopContextHooks/effect``); `nil` otherwise.
    @usableFromInline let context: ServiceContext?

    @usableFromInline static var running: UInt8 { 0 }
    @usableFromInline static var finished: UInt8 { 1 }
    @usableFromInline static var cancelled: UInt8 { 2 }

    @inlinable
    init(id: UInt64, feedback: Int, isTask: Bool, life: ChildLife? = nil, context: ServiceContext? = nil) {
        self.id = id
        self.feedback = feedback
        self.isTask = isTask
        self.life = life
        self.context = context
        self.status = Atomic(Self.running)
    }

    @inlinable
    var isCancelled: Bool { status.load(ordering: .acquiring) == Self.cancelled }

    @inlinable
    var isRunning: Bool { status.load(ordering: .acquiring) == Self.running }

    /// Whether an event this effect sent may no longer be reduced: the loop cancelled the effect,
    /// or the child feature that started it has gone (whether the effect was still running or
    /// had finished with its events still queued).
    @inlinable
    var isSilenced: Bool {
        if isCancelled { return true }
        guard let life else { return false }
        return life.isEnded
    }

    /// Moves running → cancelled; `false` if the effect had already ended.
    @inlinable
    func markCancelled() -> Bool {
        status.compareExchange(expected: Self.running, desired: Self.cancelled, ordering: .acquiringAndReleasing).exchanged
    }

    /// Moves running → finished; `false` if the effect had already ended.
    @inlinable
    func markFinished() -> Bool {
        status.compareExchange(expected: Self.running, desired: Self.finished, ordering: .acquiringAndReleasing).exchanged
    }
}

/// A running effect in the loop's registry: what identifies it and how to stop it.
@usableFromInline
struct RunningEffect: Sendable {
    @usableFromInline let handle: EffectHandle
    @usableFromInline let stopper: EffectStopper

    @inlinable
    init(handle: EffectHandle, stopper: EffectStopper) {
        self.handle = handle
        self.stopper = stopper
    }
}

/// How the loop stops a running effect.
@usableFromInline
enum EffectStopper: Sendable {
    case task(Task<Void, Never>)
    case cancellation(Cancellation)
    /// A child of the `stream` backend's host task group (see ``ChildEffect``), cancelled alone
    /// through its ``ChildCancellation``. A class of its own rather than a protocol's
    /// existential: two words wide, the existential made every stopper wider (a word more in
    /// every registry entry, its copies dearer on every backend), and boxed to avoid that it cost
    /// an allocation per effect (W3 with a `.run` effect on `stream`, in `scripts/callgrind.sh`).
    case child(ChildCancellation)

    @inlinable
    func stop() {
        switch self {
        case .task(let task): task.cancel()
        case .cancellation(let cancellation): cancellation.cancel()
        case .child(let cancellation): cancellation.cancel()
        }
    }
}
