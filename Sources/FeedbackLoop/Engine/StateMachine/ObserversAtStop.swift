/// Observers that the state's owner will never hold, because a stop got to them first: those that
/// join while a stop is under way, and those whose joining the stop discarded from the queue.
/// The final state is not published yet when they arrive, so they get it, and their stop, once
/// teardown is done: a `states` reader subscribed just before `stop()` would otherwise wait
/// forever. One of the sub-machines ``LoopStateMachine`` composes, guarded by the loop's lock.
///
/// The list exists until teardown hands it over (``handOver()``), as the payload of the one
/// state that has it; an observer set aside after that traps, naming the state and the
/// transition. It changes only through the transitions below: ``LoopStateMachine`` holds it
/// behind a setter private to its own file.
@usableFromInline
enum ObserversAtStop<State: Sendable>: Sendable {
    /// Until teardown; almost always empty.
    case collecting([ObserverEntry<State>])
    /// Teardown gave them the final state and their stop.
    case handedOver
    /// Only inside a transition, while it changes the list in place: with the list out of the
    /// enum, the array is not shared and changing it copies nothing.
    case modifying

    @inlinable
    mutating func setAside(_ entry: ObserverEntry<State>) {
        guard case .collecting(var list) = self else { invalid("setAside(_:)") }
        self = .modifying
        list.append(entry)
        self = .collecting(list)
    }

    /// Sets aside the observers whose joining `items` held, when a stop discarded them; one that
    /// asked to leave in the same items leaves. The caller holds `items` until after the lock, so
    /// an entry taken out here is never the last reference to an observer's closures.
    @inlinable
    mutating func setAside(joiningIn items: some Sequence<QueueItem<State, some Sendable>>) {
        guard case .collecting(var list) = self else { invalid("setAside(joiningIn:)") }
        self = .modifying
        for item in items {
            switch item {
            case .addObserver(let entry):
                list.append(entry)
            case .removeObserver(let id):
                list.removeAll { $0.id == id }
            case .event, .submit, .traced, .start:
                break
            }
        }
        self = .collecting(list)
    }

    /// Teardown is done: the observers set aside go to the caller, who gives them the final
    /// state and their stop after the lock.
    @inlinable
    mutating func handOver() -> [ObserverEntry<State>] {
        guard case .collecting(let list) = self else { invalid("handOver()") }
        self = .handedOver
        return list
    }

    @usableFromInline
    var stateName: String {
        switch self {
        case .collecting: "collecting"
        case .handedOver: "handedOver"
        case .modifying: "modifying"
        }
    }

    @usableFromInline
    func invalid(_ transition: StaticString) -> Never {
        preconditionFailure("ObserversAtStop.\(transition) in state \(stateName): teardown has already handed the observers over")
    }
}
