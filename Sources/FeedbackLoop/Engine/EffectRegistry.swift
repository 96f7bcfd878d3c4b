/// The loop's running effects by id: a table indexed by the id itself, with a dictionary for the
/// few ids whose slot is taken.
///
/// Not a plain `Dictionary`, because effect ids come from one sequential counter: the effects
/// alive at any moment are, but for a few long-lived ones, a sliding window of recent ids, so
/// `id & mask` gives each its own slot with no hashing at all, where a dictionary ran SipHash
/// on every insert and every removal — twice per effect, the bulk of the registry's cost in the
/// switch-latest churn (W3). Linear probing was tried and rejected: a window of sequential ids
/// is one long cluster, and each removal scanned it to its end (W3 with `.run` effects cost
/// nearly twenty times as much per switch).
///
/// An id whose slot holds another effect (a long-lived one, `mask + 1` ids older) goes to
/// `overflow`; the table doubles when it is three quarters full. Held by ``RunningEffects`` and
/// guarded by the loop's lock; its fields change only through the methods below.
@usableFromInline
struct EffectRegistry: Sendable {
    /// A power of two, or empty.
    @usableFromInline private(set) var slots: [RunningEffect?] = []
    @usableFromInline private(set) var overflow: [UInt64: RunningEffect] = [:]
    @usableFromInline private(set) var count = 0

    @inlinable
    init() {}

    @inlinable
    var isEmpty: Bool { count == 0 }

    /// How many entries the table takes before it grows.
    @inlinable
    var capacity: Int { slots.count / 4 * 3 }

    @inlinable
    func slot(of id: UInt64) -> Int { Int(truncatingIfNeeded: id) & (slots.count &- 1) }

    @inlinable
    subscript(id: UInt64) -> RunningEffect? {
        if !slots.isEmpty, let entry = slots[slot(of: id)], entry.handle.id == id { return entry }
        return overflow.isEmpty ? nil : overflow[id]
    }

    /// Registers `effect`, whose id is not registered yet.
    @inlinable
    mutating func insert(_ effect: RunningEffect) {
        if count >= capacity { resize(to: Swift.max(8, slots.count * 2)) }
        place(effect)
        count += 1
    }

    @inlinable
    mutating func place(_ effect: RunningEffect) {
        let index = slot(of: effect.handle.id)
        if slots[index] == nil {
            slots[index] = effect
        } else {
            overflow[effect.handle.id] = effect
        }
    }

    /// Takes `id` out; `nil` if it was not registered.
    @inlinable
    mutating func remove(_ id: UInt64) -> RunningEffect? {
        if !slots.isEmpty {
            let index = slot(of: id)
            if let entry = slots[index], entry.handle.id == id {
                slots[index] = nil
                count -= 1
                return entry
            }
        }
        guard !overflow.isEmpty, let entry = overflow.removeValue(forKey: id) else { return nil }
        count -= 1
        return entry
    }

    /// Every registered effect, in no particular order.
    @inlinable
    var values: [RunningEffect] {
        slots.compactMap { $0 } + overflow.values
    }

    /// How many registered effects satisfy `predicate`.
    @inlinable
    func count(where predicate: (RunningEffect) -> Bool) -> Int {
        values.count(where: predicate)
    }

    /// Gives the table back once empty, if a burst grew it past `kept` entries: a table does not
    /// shrink by itself.
    @inlinable
    mutating func shrinkIfEmpty(keeping kept: Int) {
        if count == 0 && capacity > kept {
            slots = []
            overflow = [:]
        }
    }

    @inlinable
    mutating func resize(to size: Int) {
        let entries = values
        slots = Array(repeating: nil, count: size)
        overflow = [:]
        for entry in entries { place(entry) }
    }
}
