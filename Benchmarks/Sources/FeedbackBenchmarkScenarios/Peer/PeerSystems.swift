@preconcurrency import OpenCombine

/// The scenarios' loops (``Systems``) built on the peer, ``CombineSystem``, with the same states,
/// reducers and queries, so that the only difference in a column is the design around them.
public enum PeerSystems {
    public typealias Loop = CombineSystem.Loop
    typealias Feedback = CombineSystem.Feedback

    /// The name of the peer's column in reports.
    public static let name = "opencombine"

    public static func counter() -> Loop<Int, Int> {
        Loop(initial: 0, reduce: Systems.add)
    }

    /// A counter with one feedback whose query stays `nil`, like ``Systems/idleCounter(_:)``.
    public static func idleCounter() -> Loop<Int, Int> {
        Loop(
            initial: 0, reduce: Systems.add,
            feedbacks: [.skippingRepeated({ $0 < 0 ? $0 : nil }) { _ in Empty().eraseToAnyPublisher() }])
    }

    /// Ping-pong (W2): the effect answers every count with the next event at once.
    public static func pingPong(cycles: Int) -> Loop<Systems.PingPong, Systems.PingPong.Event> {
        Loop(
            initial: Systems.PingPong(target: cycles),
            reduce: Systems.PingPong.reduce,
            feedbacks: [.skippingRepeated(Systems.PingPong.query) { _ in Just(.next).eraseToAnyPublisher() }])
    }

    public static func fanout(feedbacks: Int) -> Loop<Int, Int> {
        Loop(
            initial: 0, reduce: Systems.add,
            feedbacks: (0..<feedbacks).map { index in
                .skippingRepeated(Systems.fanoutQuery(index)) { _ in Empty().eraseToAnyPublisher() }
            })
    }

    /// Switch-latest churn (W3): one never-ending effect per generation, cancelled by the next.
    /// The effect is a publisher that never completes, counted by `census` when subscribed and when
    /// cancelled: the idiomatic never-ending effect in this design, which needs no task.
    public static func churn(census: EffectCensus) -> Loop<Systems.Churn, Systems.Churn.Event> {
        Loop(
            initial: Systems.Churn(),
            reduce: Systems.Churn.reduce,
            feedbacks: [
                .skippingRepeated({ $0.generation }) { generation in
                    Deferred { () -> Empty<Systems.Churn.Event, Never> in
                        census.began()
                        return Empty(completeImmediately: false)
                    }
                    .handleEvents(receiveCancel: { census.ended(generation: generation) })
                    .eraseToAnyPublisher()
                }
            ])
    }
}
