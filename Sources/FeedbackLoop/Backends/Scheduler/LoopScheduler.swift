#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A loop with work, waiting in ``LoopScheduler``'s ready queue: `turn` runs one turn of it on a
/// worker and returns whether the loop still has work (it is then queued again, at the back).
///
/// `turn` is a closure literal made where the loop's `State` and `Event` are concrete (the
/// ``ActorDriver``, inlined into the client), capturing nothing: in a client's specialised code it
/// is a plain function pointer, no allocation per wake-up, and it runs the client's specialised
/// drain. A protocol witness or a class override of a generic type here would run the library's
/// unspecialised code instead (metadata lookups on every event).
@usableFromInline
struct ReadyLoop: Sendable {
    /// The loop, retained while it waits and while its turn runs.
    @usableFromInline let loop: any AnyObject & Sendable
    @usableFromInline let turn: @Sendable (any AnyObject & Sendable) -> Bool

    @inlinable
    init(loop: any AnyObject & Sendable, turn: @escaping @Sendable (any AnyObject & Sendable) -> Bool) {
        self.loop = loop
        self.turn = turn
    }
}

/// The `actor` backend's workers, shared by every loop of the process that has no executor of
/// its own: one long-lived thread per CPU and one ready queue of loops that have work.
///
/// A loop is queued once, by the caller that takes its drain role (the sender that found it
/// idle); a worker takes it from the front, drains it for one turn (``LoopEngine/turnBudget``
/// items at most) and queues it again at the back if work remains, so that a busy loop gives way
/// to the others every turn. A worker with nothing to do parks on a condition variable; a loop
/// queued while one is parked wakes one. An idle loop costs the scheduler nothing.
///
/// Why threads of its own rather than tasks on the cooperative pool: waking a parked task is a
/// job on the global executor (a continuation resumed, or a `Task` made, per wake-up), which
/// costs several times a whole event on `callback`; waking a parked thread is a condition
/// variable signalled (the `service` scenario and `scripts/callgrind.sh`'s service table measure
/// both). The workers run only loops' drains — reducers, feedbacks, observers, the synchronous
/// start of effects — never a task: a `.run` effect is a task on the global executor as before.
@usableFromInline
final class LoopScheduler: @unchecked Sendable {
    // @unchecked: `queue` and `parked` are touched only with `mutex` held, which also makes
    // every access exclusive (hence `@exclusivity(unchecked)`: the run-time check cost more than
    // the rest of the hand-over); the other fields are set in `init` and never change.

    /// The process's scheduler, started at the first loop on `actor` that has no executor.
    @usableFromInline
    static let shared = LoopScheduler(workers: LoopScheduler.processors)

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let wakeUp: UnsafeMutablePointer<pthread_cond_t>
    @exclusivity(unchecked) private var queue: ReadyQueue
    /// Workers waiting on `wakeUp`.
    @exclusivity(unchecked) private var parked = 0

    /// How many workers ``shared`` starts: one per CPU online.
    static var processors: Int {
        Swift.max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    /// Starts `workers` threads, which live as long as the process.
    init(workers: Int) {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        wakeUp = .allocate(capacity: 1)
        pthread_cond_init(wakeUp, nil)
        queue = ReadyQueue()
        for _ in 0..<workers { startWorker() }
    }

    /// Queues `loop` for a worker. The caller holds the loop's drain role, which the turn takes
    /// over; the loop must not be queued again until a turn has ended without work left.
    @usableFromInline
    func schedule(_ loop: ReadyLoop) {
        pthread_mutex_lock(mutex)
        queue.append(loop)
        let wake = parked > 0
        pthread_mutex_unlock(mutex)
        // After the unlock: the worker woken does not wait for the mutex the sender still holds.
        if wake { pthread_cond_signal(wakeUp) }
    }

    /// A worker's life: a turn of the loop at the front of the queue, again and again, parked
    /// while the queue is empty. A loop is released outside the mutex: its engine's last
    /// reference may go with it, and a deinit may run user code that sends to another loop.
    private func work() -> Never {
        while true {
            let loop = next()
            if loop.turn(loop.loop) {
                // No wake-up: this worker looks at the queue again at once.
                pthread_mutex_lock(mutex)
                queue.append(loop)
                pthread_mutex_unlock(mutex)
            }
        }
    }

    /// The loop at the front of the queue, parking until there is one.
    private func next() -> ReadyLoop {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let loop = queue.popFirst() { return loop }
            parked += 1
            pthread_cond_wait(wakeUp, mutex)
            parked -= 1
        }
    }

    private func startWorker() {
        let context = Unmanaged.passRetained(self).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        defer { pthread_attr_destroy(&attributes) }
        #if canImport(Darwin)
        var thread: pthread_t? = nil
        #else
        var thread = pthread_t()
        #endif
        let created = pthread_create(&thread, &attributes, { context in
            #if canImport(Darwin)
            let context: UnsafeMutableRawPointer? = context
            #endif
            Unmanaged<LoopScheduler>.fromOpaque(context!).takeUnretainedValue().work()
        }, context)
        precondition(created == 0, "LoopScheduler: could not start a worker thread (error \(created))")
    }
}

/// A first-in, first-out ring of ready loops that grows as needed and keeps its capacity.
private struct ReadyQueue {
    private var slots: [ReadyLoop?] = Array(repeating: nil, count: 64)
    private var head = 0
    private var count = 0

    mutating func append(_ loop: ReadyLoop) {
        if count == slots.count {
            // Unrolled into a ring twice the size, oldest first.
            var grown: [ReadyLoop?] = Array(repeating: nil, count: slots.count * 2)
            for index in 0..<count { grown[index] = slots[(head + index) % slots.count] }
            slots = grown
            head = 0
        }
        slots[(head + count) % slots.count] = loop
        count += 1
    }

    mutating func popFirst() -> ReadyLoop? {
        guard count > 0 else { return nil }
        defer {
            head = (head + 1) % slots.count
            count -= 1
        }
        return slots[head].take()
    }
}
