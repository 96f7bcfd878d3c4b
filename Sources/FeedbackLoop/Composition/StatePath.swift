/// Where a child feature's state lives inside its parent's: a stored property, an optional one,
/// or one case of an enum.
///
/// ```swift
/// StatePath(\App.State.settings)                   // always there
/// StatePath(\App.State.pharmacies)                  // `Pharmacies.State?`: there while non-nil
/// StatePath(                                        // the payload of one case of an enum
///     extract: { if case .signedIn(let session) = $0 { session } else { nil } },
///     embed: App.State.signedIn)
/// ```
///
/// With pointfreeco/swift-case-paths, a `@CasePathable` enum gives both halves of the last one:
/// `StatePath(extract: \.signedIn, embed: App.State.signedIn)` (the key path to the case's optional
/// payload reads as the `extract` function).
///
/// The closures run where the reducer and feedbacks run and must be cheap and pure.
public struct StatePath<Root, Value>: Sendable {
    @usableFromInline let extract: @Sendable (Root) -> Value?
    @usableFromInline let modify: @Sendable (inout Root, (inout Value) -> Void) -> Bool

    /// A child stored at `keyPath`, always present.
    @inlinable
    public init(_ keyPath: WritableKeyPath<Root, Value> & Sendable) {
        let access = PropertyAccess(keyPath)
        self.extract = { access.read($0) }
        self.modify = { root, body in
            access.modify(&root, body)
            return true
        }
    }

    /// A child stored at `keyPath` while it is non-nil: it appears when the optional becomes a
    /// value and goes away when it becomes `nil` again.
    @inlinable
    public init(_ keyPath: WritableKeyPath<Root, Value?> & Sendable) {
        let access = PropertyAccess(keyPath)
        self.extract = { access.read($0) }
        self.modify = { root, body in
            access.modify(&root) { child in
                guard child != nil else { return false }
                body(&child!)
                return true
            }
        }
    }

    /// A child that lives in one case of an enum: `extract` returns the case's payload (or `nil`
    /// in any other case), `embed` makes the case from a payload.
    ///
    /// A change to the child is written back by embedding the changed payload, so the child
    /// may be copied once per event it reduces.
    public init(
        extract: @escaping @Sendable (Root) -> Value?,
        embed: @escaping @Sendable (Value) -> Root
    ) {
        self.extract = extract
        self.modify = { root, body in
            guard var value = extract(root) else { return false }
            body(&value)
            root = embed(value)
            return true
        }
    }

    /// The child's place inside this child: a path from `Root` to a grandchild.
    public func appending<Child>(_ path: StatePath<Value, Child>) -> StatePath<Root, Child> {
        StatePath<Root, Child>(
            extract: { root in extract(root).flatMap(path.extract) },
            modify: { root, body in
                var found = false
                let present = modify(&root) { value in found = path.modify(&value, body) }
                return present && found
            })
    }

    @usableFromInline
    init(
        extract: @escaping @Sendable (Root) -> Value?,
        modify: @escaping @Sendable (inout Root, (inout Value) -> Void) -> Bool
    ) {
        self.extract = extract
        self.modify = modify
    }
}

/// How a child feature's events travel inside its parent's: `embed` wraps a child's event in the
/// parent's (usually an enum case), `extract` unwraps it, or returns `nil` for the parent's other
/// events.
///
/// ```swift
/// EventPath(embed: App.Event.pharmacies, extract: { if case .pharmacies(let event) = $0 { event } else { nil } })
/// ```
///
/// With pointfreeco/swift-case-paths, a `@CasePathable` enum gives both:
/// `EventPath(embed: App.Event.pharmacies, extract: \.pharmacies)`.
public struct EventPath<Root: Sendable, Value: Sendable>: Sendable {
    @usableFromInline let embed: @Sendable (Value) -> Root
    @usableFromInline let extract: @Sendable (Root) -> Value?
    /// Set by the package's own layers that must tell later whether the effect that sent an event
    /// may still change state (see ``EffectLiveness``); `nil` for every path users make.
    @usableFromInline let embedFromEffect: (@Sendable (Value, EffectLiveness) -> Root)?

    /// A child's events wrapped by `embed` and found again by `extract`, which must return `nil`
    /// for every event of the parent that `embed` did not make.
    public init(embed: @escaping @Sendable (Value) -> Root, extract: @escaping @Sendable (Root) -> Value?) {
        self.embed = embed
        self.extract = extract
        self.embedFromEffect = nil
    }

    /// A path whose `embed` is also told the liveness of the effect that sent each child event
    /// (events sent by `.send` effects, or embedded outside any effect, get one that is never
    /// silenced).
    package init(
        embedFromEffect: @escaping @Sendable (Value, EffectLiveness) -> Root,
        extract: @escaping @Sendable (Root) -> Value?
    ) {
        self.embed = { embedFromEffect($0, EffectLiveness(handle: nil)) }
        self.extract = extract
        self.embedFromEffect = embedFromEffect
    }
}

/// Whether the effect that sent an event may still change state: not once the loop cancelled it,
/// nor once the child feature that started it has gone (``ChildLife``).
///
/// For a layer between an effect and the reducer that holds an event for a while — the durable
/// loop journals an effect's event only after the events ahead of it are reduced, and those may
/// cancel the effect — and must judge it as the loop would when the event's turn comes.
@usableFromInline
package struct EffectLiveness: Sendable {
    @usableFromInline let handle: EffectHandle?

    @inlinable
    init(handle: EffectHandle?) {
        self.handle = handle
    }

    /// The loop would drop the event now: its effect was cancelled, or its child has gone.
    package var isSilenced: Bool {
        handle?.isSilenced ?? false
    }
}
