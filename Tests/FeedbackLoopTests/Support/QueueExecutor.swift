import Dispatch

/// A `SerialExecutor` of the test's own, as a server would bring (SwiftNIO's `EventLoop.executor`
/// is one): jobs run one at a time on a private dispatch queue, and `isCurrent` says whether the
/// calling code runs on it.
final class QueueExecutor: SerialExecutor, @unchecked Sendable {
    // @unchecked: the only state is the serial `queue` and the `jobs` counter behind its lock.
    private let queue: DispatchQueue
    private let key = DispatchSpecificKey<Bool>()
    private let jobs = Locked(0)

    init(label: String = "QueueExecutor") {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: key, value: true)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0 += 1 }
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    func checkIsolated() {
        precondition(isCurrent, "QueueExecutor.checkIsolated: not on \(queue.label)")
    }

    /// Whether the caller runs on this executor's queue.
    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }

    /// How many jobs the executor has been given.
    var jobsRun: Int { jobs.withLock { $0 } }
}
