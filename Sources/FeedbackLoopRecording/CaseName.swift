/// Names values by their enum case, without associated values: the labels of a
/// ``StateDiagram``.
///
/// `CaseName.of(State.loaded(pharmacies, nil))` is `"loaded"`;
/// `CaseName.path(of: Event.ui(.addPharmacy))` is `"ui.addPharmacy"`.
public enum CaseName {
    /// The case name of an enum value, found by reflection: `"loaded"` for
    /// `.loaded(pharmacies, nil)`, `"loading"` for `.loading`.
    ///
    /// A case without associated values is named by `String(describing:)`, so an enum with a
    /// custom `description` is named by it. A value that is not an enum is named by
    /// `String(describing:)` as a whole: name a struct state by one of its enum properties
    /// instead (`{ CaseName.of($0.phase) }`).
    public static func of(_ value: Any) -> String {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .enum else { return String(describing: value) }
        if let label = mirror.children.first?.label { return label }
        return String(describing: value)
    }

    /// The case name followed by the case names of nested enum payloads, up to `depth` levels:
    /// `"ui.select"` for `.ui(.select(2, .dismiss))` with the default depth of 2.
    ///
    /// Descends only into a payload that is itself a single enum value; a tuple payload or a
    /// struct ends the path.
    public static func path(of value: Any, depth: Int = 2) -> String {
        var names: [String] = []
        var current: Any = value
        while names.count < max(depth, 1) {
            let mirror = Mirror(reflecting: current)
            guard mirror.displayStyle == .enum else {
                if names.isEmpty { names.append(String(describing: current)) }
                break
            }
            guard let child = mirror.children.first, let label = child.label else {
                names.append(String(describing: current))
                break
            }
            names.append(label)
            // A case with one payload keeps it as the child's value; several become a tuple.
            guard Mirror(reflecting: child.value).displayStyle == .enum else { break }
            current = child.value
        }
        return names.joined(separator: ".")
    }
}
