/// Where a loop is in its life, drain role included: the smallest of the state machines under the
/// loop's lock, and the one every transition of ``LoopStateMachine`` consults first.
///
/// The drain role (who may touch the ``StateOwner``) and the phase were two fields whose valid
/// combinations were kept by convention; they are one enum here, changed only by the transitions
/// below, each of which traps — naming the phase and the transition — when called in a phase
/// where it makes no sense. A loop that stopping reached keeps the drain role for good: nothing
/// is reduced any more, and nobody else takes it.
@usableFromInline
enum Phase: UInt8, Sendable, CustomStringConvertible {
    /// Running, nobody holds the drain role: the next item's sender takes it.
    case idle
    /// Running, and one party (a thread on `callback`, the actor, the `stream` host) holds the
    /// drain role and handles the queue.
    case draining
    /// `stop()` began; whoever holds the drain role tears the loop down.
    case stopping
    /// Effects were cancelled and observers finished; some effects' work may still be under way.
    case tornDown
    /// Torn down, and every effect's work has ended.
    case stopped

    @inlinable
    var isRunning: Bool { self == .idle || self == .draining }

    @usableFromInline
    var description: String {
        switch self {
        case .idle: "idle"
        case .draining: "draining"
        case .stopping: "stopping"
        case .tornDown: "tornDown"
        case .stopped: "stopped"
        }
    }

    /// How an item may enter the queue.
    @usableFromInline
    enum Admission {
        /// The loop was idle: the caller now holds the drain role.
        case takeRole
        /// A drain is under way: the item queues behind it.
        case queue
        /// Stop has begun: nothing enters any more.
        case refuse
    }

    @inlinable
    mutating func admit() -> Admission {
        if self == .idle {
            self = .draining
            return .takeRole
        }
        return self == .draining ? .queue : .refuse
    }

    /// The holder found the queue empty and gives the drain role up.
    @inlinable
    mutating func release() {
        guard _fastPath(self == .draining) else { invalid("release()") }
        self = .idle
    }

    /// The holder of the drain role checks, between batches, whether to go on.
    /// `true` while running; `false` once stop has begun, and it must tear down.
    ///
    /// One comparison on the way every send takes (W1); the rest is out of line.
    @inlinable
    func drainGoesOn(_ transition: StaticString) -> Bool {
        if _fastPath(self == .draining) { return true }
        stoppingOrInvalid(transition)
        return false
    }

    @usableFromInline
    func stoppingOrInvalid(_ transition: StaticString) {
        guard self == .stopping else { invalid(transition) }
    }

    @usableFromInline
    enum BeginStop {
        /// The loop was idle: the caller now holds the drain role and tears down.
        case tearDown
        /// A drain is under way: its holder tears down at the end of its batch.
        case drainerTearsDown
        /// Stop had already begun.
        case alreadyStopping
    }

    @inlinable
    mutating func beginStop() -> BeginStop {
        switch self {
        case .idle:
            self = .stopping
            return .tearDown
        case .draining:
            self = .stopping
            return .drainerTearsDown
        case .stopping, .tornDown, .stopped:
            return .alreadyStopping
        }
    }

    /// Teardown, by the holder of the drain role, is done.
    @inlinable
    mutating func tornDown() {
        guard self == .stopping else { invalid("tornDown()") }
        self = .tornDown
    }

    /// The last effect's work has ended after teardown.
    @inlinable
    mutating func effectsEnded() {
        guard self == .tornDown else { invalid("effectsEnded()") }
        self = .stopped
    }

    @usableFromInline
    func invalid(_ transition: StaticString) -> Never {
        preconditionFailure("Phase.\(transition) in phase \(self): not a transition of a loop's life")
    }
}
