import FeedbackLoop

extension Pharmacies {
    /// Where the screen sends the user — the article's routes, handled by a flow controller.
    public enum Route: Hashable, Sendable, Codable, CustomStringConvertible {
        /// Present the map so the user can pick a pharmacy; its answer comes back as
        /// ``Event/didSelectPlace(_:)``.
        case showMap
        /// Present directions to the place.
        case showDirections(Place)
        /// Present an alert with the error.
        case showAlert(PharmaciesError)
        /// Close the screen, handing the selected pharmacy (or `nil`) to the caller.
        case dismiss(selected: Pharmacy?)

        public var description: String {
            switch self {
            case .showMap: "show map"
            case .showDirections(let place): "show directions to \(place)"
            case .showAlert(let error): "show alert \"\(error)\""
            case .dismiss(nil): "dismiss with no pharmacy"
            case .dismiss(let pharmacy?): "dismiss with \(pharmacy.name)"
            }
        }
    }

    /// The route a state asks for, if any. Derived from state alone, as in the article, so the
    /// state stays the single source of truth.
    public static func route(for state: State) -> Route? {
        switch state {
        case .loaded(_, let error?): .showAlert(error)
        case .searching: .showMap
        case .showingDirections(_, let place): .showDirections(place)
        case .dismissing(_, let selected): .dismiss(selected: selected)
        default: nil
        }
    }

    /// The routes of a running loop: ``route(for:)`` of each new state, skipping states equal to
    /// the one before (the article's `state.signal.skipRepeats().filterMap(route)`).
    ///
    /// Starts from the loop's current state, so a screen that opens on the map still shows it.
    /// Finishes when the loop stops. Every route is delivered: the transient `failed` state lasts
    /// one step, and its alert is never skipped.
    public static func routes(of loop: Loop<State, Event>) -> AsyncStream<Route> {
        let (routes, continuation) = AsyncStream.makeStream(of: Route.self)
        // The stream of states, not the loop, goes into the task: holding the loop would keep it
        // from stopping when its owner releases it.
        let states = loop.states
        let task = Task {
            var previous: State?
            for await state in states where state != previous {
                previous = state
                if let route = route(for: state) {
                    continuation.yield(route)
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return routes
    }
}
