/// Every effect whose work may still be under way: a `.run` effect until its task returns (even
/// after it was cancelled or finished with ``Sink/finish(sending:)``), a `.callback` effect until
/// it finishes or its cancellation has run. One of the sub-machines ``LoopStateMachine``
/// composes, guarded by the loop's lock.
///
/// An effect's work can end before the drain role registers it (a `.run` body that returns at
/// once, a callback effect that finishes inside its `body`), on another thread: its end is noted
/// in `endedBeforeRegistration`, almost always empty, and the registration that follows finds it
/// there and keeps nothing. Its fields change only through the transitions below (their setters
/// are private to this file); an effect whose work is reported ended twice traps, naming the
/// effect and the transition.
@usableFromInline
struct RunningEffects: Sendable {
    @usableFromInline private(set) var registry = EffectRegistry()
    @usableFromInline private(set) var endedBeforeRegistration: Set<UInt64> = []

    @inlinable
    init() {}

    @inlinable
    var isEmpty: Bool { registry.isEmpty }

    @inlinable
    var count: Int { registry.count }

    @inlinable
    subscript(id: UInt64) -> RunningEffect? { registry[id] }

    /// Every registered effect, in no particular order.
    @inlinable
    var values: [RunningEffect] { registry.values }

    /// The id of the one effect left, if exactly one is.
    @inlinable
    var onlyOne: UInt64? {
        guard registry.count == 1 else { return nil }
        return registry.values.first?.handle.id
    }

    /// A started effect joins, unless its work already ended. Returns the entry when it was not
    /// kept, for the caller to release after the lock.
    @inlinable
    mutating func register(_ effect: RunningEffect) -> RunningEffect? {
        if !endedBeforeRegistration.isEmpty && endedBeforeRegistration.remove(effect.handle.id) != nil { return effect }
        registry.insert(effect)
        return nil
    }

    /// An effect's work is over: its entry leaves, or, when it was not registered yet, its end is
    /// noted for the registration to come.
    @inlinable
    mutating func workEnded(id: UInt64, keeping kept: Int) -> RunningEffect? {
        if let entry = remove(id, keeping: kept) { return entry }
        if !endedBeforeRegistration.insert(id).inserted { invalid("workEnded(id:)", effect: id) }
        return nil
    }

    /// Takes an effect out; after a burst of effects, the emptied table goes too if it grew past
    /// `kept` entries.
    @inlinable
    mutating func remove(_ id: UInt64, keeping kept: Int) -> RunningEffect? {
        let entry = registry.remove(id)
        registry.shrinkIfEmpty(keeping: kept)
        return entry
    }

    /// How many registered effects have not been cancelled or finished.
    @inlinable
    func countRunning() -> Int {
        registry.count { $0.handle.isRunning }
    }

    @usableFromInline
    func invalid(_ transition: StaticString, effect: UInt64) -> Never {
        preconditionFailure(
            "RunningEffects.\(transition) for effect \(effect) in state ended-before-registration: its work already ended once")
    }
}
