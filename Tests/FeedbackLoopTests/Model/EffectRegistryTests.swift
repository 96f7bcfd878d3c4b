@testable import FeedbackLoop
import Testing

/// The registry of running effects against a `Dictionary`: random inserts, removals and lookups,
/// with ids issued in order as the loop issues them, removed in any order, across growth,
/// wrap-around at the table's end and shrinking.
@Suite("EffectRegistry: an open-addressing table that agrees with a dictionary")
struct EffectRegistryTests {
    static func entry(_ id: UInt64) -> RunningEffect {
        RunningEffect(handle: EffectHandle(id: id, feedback: 0, isTask: false), stopper: .cancellation(.none))
    }

    @Test(arguments: [1, 2, 3, 4])
    func randomOperationsAgreeWithADictionary(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var registry = EffectRegistry()
        var reference: [UInt64: Int] = [:]
        var nextID: UInt64 = random.next() % 1_000  // start anywhere, so ids wrap round the table
        for step in 0..<20_000 {
            let live = Array(reference.keys)
            switch random.next() % 10 {
            case 0..<5:
                nextID += 1 + random.next() % 3  // ids skip some values, as other ids are issued between effects
                registry.insert(Self.entry(nextID))
                reference[nextID] = step
            case 5..<9:
                guard let id = live.isEmpty ? nil : live[Int(random.next() % UInt64(live.count))] else { continue }
                #expect(registry.remove(id)?.handle.id == id)
                reference[id] = nil
            default:
                #expect(registry.remove(nextID + 1) == nil, "an id never registered")
            }
            if step % 97 == 0 {
                for id in live { #expect((registry[id] != nil) == (reference[id] != nil)) }
                #expect(Set(registry.values.map(\.handle.id)) == Set(reference.keys))
            }
            #expect(registry.count == reference.count)
            if reference.isEmpty { registry.shrinkIfEmpty(keeping: 64) }
        }
        for id in Array(reference.keys) { #expect(registry.remove(id)?.handle.id == id) }
        #expect(registry.isEmpty)
        registry.shrinkIfEmpty(keeping: 64)
        #expect(registry.capacity <= 64)
    }

    /// Ids that want the same slot (a long-lived effect and one `mask + 1` ids younger): every one
    /// is found and removed, in any order, and the slot is reused once free.
    @Test func idsSharingASlotAreAllFoundAndRemoved() {
        let ids: [UInt64] = [6, 14, 22, 30, 7]  // slots of a table of 8: 6, 6, 6, 6, 7
        for removedFirst in ids {
            var registry = EffectRegistry()
            for id in ids { registry.insert(Self.entry(id)) }
            #expect(registry.remove(removedFirst)?.handle.id == removedFirst)
            #expect(registry[removedFirst] == nil)
            for id in ids where id != removedFirst { #expect(registry[id]?.handle.id == id, "\(id) lost after removing \(removedFirst)") }
            registry.insert(Self.entry(38))  // slot 6 again
            #expect(registry[38] != nil)
            #expect(registry.count == ids.count)
        }
    }
}
