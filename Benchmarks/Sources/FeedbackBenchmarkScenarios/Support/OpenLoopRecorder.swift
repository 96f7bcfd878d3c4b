import Synchronization

/// The receiving end of an open-loop latency run: event `i` was meant to be sent at
/// `start + i × interval`, and its latency is measured from that intended time, not from when the
/// sender got round to it — so a sender held up by a slow `send` does not hide the delay it
/// caused (no coordinated omission).
final class OpenLoopRecorder: Sendable {
    /// When event 0 is due; see ``begin(lead:)``.
    private let startTime: Atomic<UInt64>
    let interval: Double
    let expected: Int
    /// Whether events must be observed in the order they were sent: by one consumer, yes; spread
    /// over many loops (`service`), each observed by its own, no.
    let inOrder: Bool
    let histogram = LatencyHistogram()
    private let received = Atomic<Int>(0)
    private let outOfOrder = Atomic<Int>(0)
    private let last = Atomic<Int>(-1)
    private let finishedAt = Atomic<UInt64>(0)
    private let done = Once<Void>()

    /// `interval` is in nanoseconds; 0 sends flat out (calibration).
    init(expected: Int, interval: Double, inOrder: Bool = true, lead: UInt64 = 1_000_000) {
        self.startTime = Atomic(Nanoseconds.now() + lead)
        self.interval = interval
        self.expected = expected
        self.inOrder = inOrder
    }

    var start: UInt64 { startTime.load(ordering: .relaxed) }

    /// Moves event 0's due time to `lead` from now: for a run whose receivers had to be made after
    /// the recorder they report to (many loops take a while), so that their making is not counted
    /// as the first events' latency. Called before the first send, which orders it before every
    /// observation of an event.
    func begin(lead: UInt64 = 1_000_000) {
        startTime.store(Nanoseconds.now() + lead, ordering: .relaxed)
    }

    @inline(__always)
    func intended(_ index: Int) -> UInt64 {
        start &+ UInt64(Double(index) * interval)
    }

    /// Event `index` was observed. Called by one consumer at a time, in order, unless the
    /// recorder was made with `inOrder` false.
    func receive(_ index: Int) {
        let now = Nanoseconds.now()
        let intended = intended(index)
        histogram.record(now > intended ? now - intended : 0)
        if inOrder, last.exchange(index, ordering: .relaxed) >= index { outOfOrder.add(1, ordering: .relaxed) }
        if received.add(1, ordering: .acquiringAndReleasing).newValue == expected {
            finishedAt.store(now, ordering: .releasing)
            done.set(())
        }
    }

    /// Waits for every expected event, failing the run after `seconds`.
    func waitForAll(seconds: Int, _ what: String) async throws {
        let done = self.done
        try await withDeadline(seconds: seconds, what) { await done.value }
        let outOfOrder = outOfOrder.load(ordering: .acquiring)
        guard outOfOrder == 0 else { throw ScenarioFailure("\(what): \(outOfOrder) events observed out of order") }
    }

    /// Events per second from the first intended send to the last observation.
    var rate: Double {
        let elapsed = finishedAt.load(ordering: .acquiring) &- start
        return Double(expected) / (Double(Swift.max(elapsed, 1)) / 1e9)
    }
}
