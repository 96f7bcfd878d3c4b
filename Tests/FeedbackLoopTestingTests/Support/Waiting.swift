import FeedbackLoop

extension Loop {
    /// Returns once the loop has published a state that satisfies `condition` — a way for a
    /// test to let effect events land without asserting them. Bounded by the test's time limit.
    func firstState(where condition: @escaping @Sendable (State) -> Bool) async {
        for await state in states where condition(state) {
            return
        }
    }
}
