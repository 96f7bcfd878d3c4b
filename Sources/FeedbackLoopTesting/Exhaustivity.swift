#if Testing
/// Which checks a ``TestLoop`` makes beyond the assertions a test writes. By default, all.
///
/// Relax a check when a test is about one aspect of a feature and the rest is covered
/// elsewhere — say, a test of a screen's layout state that does not care which events the
/// analytics effect sends:
///
/// ```swift
/// let loop = TestLoop(initial: State(), reduce: reduce, feedbacks: feedbacks,
///                     exhaustivity: .on.subtracting(.receivedEvents))
/// ```
public struct Exhaustivity: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int

    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// The closure given to `send` or `receive` must describe the whole change: the state before
    /// the event, changed by the closure, must equal the state after it. Without this check
    /// the closure asserts only what it sets: the state after the event, changed by the
    /// closure, must be unchanged — other fields may change unasserted.
    public static let state = Exhaustivity(rawValue: 1 << 0)

    /// Every event an effect sends must be received, in order: `receive` fails when the next
    /// event is another one, and `send` and `finish` fail when events arrived that no
    /// `receive` asserted. Without this check `receive` skips events until the one it expects,
    /// and unasserted events are ignored.
    public static let receivedEvents = Exhaustivity(rawValue: 1 << 1)

    /// No effect may still be running when ``TestLoop/finish(timeout:fileID:filePath:line:column:)`` is
    /// called (it waits, up to its timeout, for running effects to end), and no effect may
    /// throw. Without this check `finish` cancels whatever still runs, without waiting.
    public static let effects = Exhaustivity(rawValue: 1 << 2)

    /// Every check.
    public static let on: Exhaustivity = [.state, .receivedEvents, .effects]
    /// No check beyond the test's own assertions.
    public static let off: Exhaustivity = []

    public var description: String {
        var names: [String] = []
        if contains(.state) { names.append("state") }
        if contains(.receivedEvents) { names.append("receivedEvents") }
        if contains(.effects) { names.append("effects") }
        return "[" + names.joined(separator: ", ") + "]"
    }
}
#endif
