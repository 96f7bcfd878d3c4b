import FeedbackLoop
import FeedbackLoopDurable
import FeedbackLoopDurableTesting
import Foundation
import Testing

/// A durable loop reduces every event it journaled, whatever capacity its loop configuration
/// names: a bounded inner queue dropped journaled events, leaving a state that no longer matched
/// its journal.
@Suite("Durable loops reduce every journaled event")
struct InnerCapacityTests {
    @Test(arguments: Backend.allCases)
    func aBoundedCapacityDropsNoJournaledEvent(backend: Backend) async throws {
        let path = TemporaryFiles.path("capacity")
        let loop = try await DurableLoop(
            id: "counter", journal: try SQLiteJournal(path: path), initial: 0, reduce: { (count: inout Int, add: Int) in count += add },
            backend: backend, loopConfiguration: LoopConfiguration(capacity: .bounded(1)))
        let states = Probe<Int>()
        let observation = loop.observe { states.record($0) }
        for _ in 0..<201 { try loop.send(1) }
        // Bounded: an event the inner queue dropped is never reduced, and nothing would end a
        // `sendAndWait` on it.
        try await states.wait(for: "every journaled event to be reduced") { $0.last == 201 }
        observation.cancel()
        await loop.stop()

        let recovered = try await DurableLoop(
            id: "counter", journal: try SQLiteJournal(path: path), initial: 0, reduce: { (count: inout Int, add: Int) in count += add },
            backend: backend)
        #expect(recovered.state == 201)
        await recovered.stop()
    }
}
