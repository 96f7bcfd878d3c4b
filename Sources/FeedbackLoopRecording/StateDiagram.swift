/// A state diagram drawn from what a loop actually did: states named by their enum case,
/// edges by the event case that moved between them, each distinct edge once — rendered as
/// Mermaid (``mermaid``) or Graphviz (``dot``).
///
/// ```swift
/// let log = TransitionLog<Pharmacies.State, Pharmacies.Event>()
/// // … run the loop with `instrumentation: log.instrumentation`, or use a TestLoop's transitions …
/// let diagram = StateDiagram(log.transitions)
/// print(diagram.mermaid)
/// ```
///
/// ```
/// stateDiagram-v2
///     [*] --> loading
///     loading --> loaded: loaded
///     loaded --> adding: ui
/// ```
///
/// States and edges keep the order in which the run first reached them, so the same run always
/// gives the same text (fit to commit next to the code). The diagram shows only what the run
/// did: merge the runs of several scenarios with ``merging(_:)`` to cover every path.
public struct StateDiagram: Sendable, Hashable {
    /// One arrow: a move from a state to a state on an event.
    public struct Edge: Sendable, Hashable {
        public var from: String
        public var to: String
        public var event: String

        public init(from: String, to: String, event: String) {
            self.from = from
            self.to = to
            self.event = event
        }
    }

    /// The state the run started in, marked with the start arrow; `nil` for none.
    public var initial: String?
    /// Every state, in the order first reached.
    public private(set) var states: [String] = []
    /// Every distinct edge, in the order first taken.
    public private(set) var edges: [Edge] = []

    /// A diagram with the given start and edges (duplicates are dropped).
    public init(initial: String?, edges: some Sequence<Edge>) {
        self.initial = initial
        if let initial { addState(initial) }
        for edge in edges { add(edge) }
    }

    /// The diagram of a run. Every transition is an edge, including those that left the state
    /// unchanged; when `State` is `Equatable`, the initializer of the same shape constrained to
    /// `Equatable` states is chosen and leaves those out.
    ///
    /// - Parameters:
    ///   - transitions: The run, in order.
    ///   - initial: The start state; by default the first transition's `before`.
    ///   - stateName: How to name a state; by default its enum case (``CaseName/of(_:)``). For a
    ///     struct state, name it by the property that holds its phase.
    ///   - eventName: How to name an event; by default its enum case. ``CaseName/path(of:depth:)``
    ///     names nested events such as `.ui(.addPharmacy)` as `ui.addPharmacy`.
    @_disfavoredOverload
    public init<State, Event>(
        _ transitions: some Sequence<Transition<State, Event>>,
        initial: State? = nil,
        stateName: (State) -> String = CaseName.of,
        eventName: (Event) -> String = CaseName.of
    ) {
        self.init(transitions, initial: initial, stateName: stateName, eventName: eventName, including: { _ in true })
    }

    /// The diagram of a run, leaving out transitions whose event left the state exactly as it
    /// was (events the reducer ignored): they are not moves. The parameters are those of the
    /// unconstrained initializer.
    public init<State: Equatable, Event>(
        _ transitions: some Sequence<Transition<State, Event>>,
        initial: State? = nil,
        stateName: (State) -> String = CaseName.of,
        eventName: (Event) -> String = CaseName.of
    ) {
        self.init(
            transitions, initial: initial, stateName: stateName, eventName: eventName,
            including: { $0.before != $0.after })
    }

    private init<State, Event>(
        _ transitions: some Sequence<Transition<State, Event>>,
        initial: State?,
        stateName: (State) -> String,
        eventName: (Event) -> String,
        including include: (Transition<State, Event>) -> Bool
    ) {
        self.init(initial: initial.map(stateName), edges: [])
        for transition in transitions {
            if self.initial == nil {
                self.initial = stateName(transition.before)
                addState(stateName(transition.before))
            }
            guard include(transition) else { continue }
            add(Edge(from: stateName(transition.before), to: stateName(transition.after), event: eventName(transition.event)))
        }
    }

    /// This diagram with the states and edges of `other` added (its start is kept unless it
    /// has none): the union of several scenarios' runs.
    public func merging(_ other: StateDiagram) -> StateDiagram {
        var merged = self
        if merged.initial == nil, let initial = other.initial {
            merged.initial = initial
        }
        for state in other.states { merged.addState(state) }
        for edge in other.edges { merged.add(edge) }
        return merged
    }

    private mutating func addState(_ state: String) {
        if !states.contains(state) { states.append(state) }
    }

    private mutating func add(_ edge: Edge) {
        addState(edge.from)
        addState(edge.to)
        if !edges.contains(edge) { edges.append(edge) }
    }

    // MARK: Rendering

    /// The diagram as Mermaid `stateDiagram-v2` text, for Markdown: GitHub draws it inside a
    /// code block whose language is `mermaid`.
    ///
    /// Names that are not plain identifiers get an identifier and keep the name as their label.
    public var mermaid: String {
        var lines = ["stateDiagram-v2"]
        for state in states where Self.mermaidID(state) != state {
            lines.append("    state \"\(String(Self.mermaidLabel(state).map { $0 == "\"" ? "'" : $0 }))\" as \(Self.mermaidID(state))")
        }
        if let initial {
            lines.append("    [*] --> \(Self.mermaidID(initial))")
        }
        for edge in edges {
            lines.append("    \(Self.mermaidID(edge.from)) --> \(Self.mermaidID(edge.to)): \(Self.mermaidLabel(edge.event))")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The diagram as a Graphviz DOT digraph, left to right; render it with
    /// `dot -Tsvg diagram.dot -o diagram.svg`.
    public var dot: String {
        var lines = [
            "digraph StateDiagram {",
            "    rankdir=LR;",
            "    node [shape=box, style=rounded];",
        ]
        for state in states {
            lines.append("    \(Self.dotQuoted(state));")
        }
        if let initial {
            lines.append("    \"[*]\" [shape=point, label=\"\"];")
            lines.append("    \"[*]\" -> \(Self.dotQuoted(initial));")
        }
        for edge in edges {
            lines.append("    \(Self.dotQuoted(edge.from)) -> \(Self.dotQuoted(edge.to)) [label=\(Self.dotQuoted(edge.event))];")
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func mermaidID(_ name: String) -> String {
        let scalars = name.unicodeScalars.map { scalar -> Character in
            (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_") && scalar.isASCII
                ? Character(scalar) : "_"
        }
        let id = String(scalars)
        return id.isEmpty ? "_" : id
    }

    /// Mermaid ends a label at a line break and reads `;` as a statement separator.
    private static func mermaidLabel(_ name: String) -> String {
        String(name.map { $0 == "\n" || $0 == "\r" || $0 == ";" ? " " : $0 })
    }

    private static func dotQuoted(_ name: String) -> String {
        var quoted = "\""
        for character in name {
            switch character {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            default: quoted.append(character)
            }
        }
        return quoted + "\""
    }
}
