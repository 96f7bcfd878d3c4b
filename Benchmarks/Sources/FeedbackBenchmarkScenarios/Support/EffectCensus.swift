import FeedbackLoop
import Synchronization

/// Counts, from inside the effects themselves, how many bodies began and how many saw their
/// cancellation — the ground truth that ``RunCheck`` holds the loop's own statistics against —
/// and optionally the latency from a state change to the cancellation handler.
public final class EffectCensus: Sendable {
    /// A snapshot of the counts.
    public struct Counts: Sendable, Hashable {
        public var started: Int
        public var cancelled: Int

        public init(started: Int, cancelled: Int) {
            self.started = started
            self.cancelled = cancelled
        }
    }

    private let started = Atomic<Int>(0)
    private let cancelled = Atomic<Int>(0)
    let stamps: TransitionStamps?
    let cancellationLatency: LatencyHistogram?

    /// A census; with `stamps`, each cancellation of the effect for generation `g` records the time
    /// since the state change to generation `g + 1` in `cancellationLatency`.
    init(stamps: TransitionStamps?) {
        self.stamps = stamps
        self.cancellationLatency = stamps == nil ? nil : LatencyHistogram()
    }

    /// A census that only counts.
    public convenience init() {
        self.init(stamps: nil)
    }

    /// What the effects have counted so far.
    public var counts: Counts {
        Counts(started: started.load(ordering: .acquiring), cancelled: cancelled.load(ordering: .acquiring))
    }


    /// The body of a never-ending effect: counts its start, parks until cancelled, counts the
    /// cancellation. Parked on a continuation, not in `Task.sleep`, which would keep ~0.8 KB per
    /// cancelled sleeper until its deadline and show up as a leak in the RSS figures.
    func parkUntilCancelled(generation: Int = 0) async {
        began()
        let slot = ParkingSlot()
        await withTaskCancellationHandler {
            await slot.park()
        } onCancel: {
            ended(generation: generation)
            slot.release()
        }
    }

    /// A never-ending effect's body began: a task's, or a callback effect's (which has no task).
    func began() {
        started.add(1, ordering: .releasing)
    }

    /// The never-ending effect of `generation` saw its cancellation. With stamps, records the time
    /// since the state change that caused it; a stamp still 0 means no state change did (the loop
    /// stopped).
    func ended(generation: Int) {
        if let stamps, let cancellationLatency, case let changed = stamps[generation + 1], changed != 0 {
            let now = Nanoseconds.now()
            cancellationLatency.record(now > changed ? now - changed : 0)
        }
        cancelled.add(1, ordering: .releasing)
    }
}

/// One parked task and its release, safe whichever comes first.
final class ParkingSlot: Sendable {
    private enum State {
        case idle
        case parked(UnsafeContinuation<Void, Never>)
        case released
    }

    private let state = Lock(State.idle)

    func park() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let releasedAlready = state.withLock { state -> Bool in
                if case .released = state { return true }
                state = .parked(continuation)
                return false
            }
            if releasedAlready { continuation.resume() }
        }
    }

    func release() {
        let parked = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            defer { state = .released }
            if case .parked(let continuation) = state { return continuation }
            return nil
        }
        parked?.resume()
    }
}

/// When each generation's state change happened, written by the loop's `onTransition` hook and
/// read by the cancellation handler of the previous generation's effect.
///
/// Atomic slots, not plain memory: the write happens-before the read only through the engine's
/// and the task runtime's own synchronisation, which ThreadSanitizer cannot see through, and an
/// atomic store and load cost no more than a plain one on x86-64 and arm64.
final class TransitionStamps: @unchecked Sendable {
    // @unchecked: `slots` is allocated and initialised in `init`, freed in `deinit`, and in between
    // only read and written through each slot's `Atomic`.
    private let slots: UnsafeMutablePointer<Atomic<UInt64>>
    private let count: Int

    init(count: Int) {
        self.count = count
        self.slots = .allocate(capacity: count)
        for index in 0..<count { (slots + index).initialize(to: Atomic(0)) }
    }

    deinit {
        slots.deinitialize(count: count)
        slots.deallocate()
    }

    subscript(generation: Int) -> UInt64 {
        get { generation >= 0 && generation < count ? slots[generation].load(ordering: .acquiring) : 0 }
        set { if generation >= 0 && generation < count { slots[generation].store(newValue, ordering: .releasing) } }
    }
}
