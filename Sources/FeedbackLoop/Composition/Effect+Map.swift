extension Effect {
    /// The same work, sending `transform(event)` for every event it sends.
    ///
    /// How a child feature's effect becomes its parent's: cancellation, errors and the
    /// dropping of events sent after cancellation are those of the effect itself.
    ///
    /// ```swift
    /// let effect: Effect<App.Event> = Login.logIn(request).map(App.Event.login)
    /// ```
    @inlinable
    public func map<Parent: Sendable>(_ transform: @escaping @Sendable (Event) -> Parent) -> Effect<Parent> {
        switch work {
        case .none:
            return .none
        case .send(let events):
            return Effect<Parent>(.send(events.map(transform)))
        case .run(let priority, let body):
            return Effect<Parent>(.run(priority: priority) { sink in
                try await body(sink.embedding(transform))
            })
        case .callback(let body):
            return Effect<Parent>(.callback { sink in
                body(sink.embedding(transform))
            })
        }
    }
}

extension Effect {
    /// The same work, sending `transform(event, liveness)` for every event it sends, where
    /// `liveness` tells later whether this effect may still change state (see
    /// ``EffectLiveness``). A `.send` effect's events get a liveness that is never silenced.
    @inlinable
    func map<Parent: Sendable>(
        withLiveness transform: @escaping @Sendable (Event, EffectLiveness) -> Parent
    ) -> Effect<Parent> {
        switch work {
        case .none:
            return .none
        case .send(let events):
            return Effect<Parent>(.send(events.map { transform($0, EffectLiveness(handle: nil)) }))
        case .run(let priority, let body):
            return Effect<Parent>(.run(priority: priority) { sink in
                let liveness = EffectLiveness(handle: sink.handle)
                try await body(sink.embedding { transform($0, liveness) })
            })
        case .callback(let body):
            return Effect<Parent>(.callback { sink in
                let liveness = EffectLiveness(handle: sink.handle)
                return body(sink.embedding { transform($0, liveness) })
            })
        }
    }
}

extension Sink {
    /// A sink for a child's events that sends `embed(event)` here: same effect, same
    /// cancellation.
    @inlinable
    func embedding<Child: Sendable>(_ embed: @escaping @Sendable (Child) -> Event) -> Sink<Child> {
        Sink<Child>(receiver: EmbeddingReceiver(parent: receiver, embed: embed), handle: handle)
    }
}

/// Forwards a child's events, embedded, to the parent's receiver.
@usableFromInline
final class EmbeddingReceiver<Event: Sendable, Parent: Sendable>: EventReceiver {
    @usableFromInline let parent: any EventReceiver<Parent>
    @usableFromInline let embed: @Sendable (Event) -> Parent

    @inlinable
    init(parent: any EventReceiver<Parent>, embed: @escaping @Sendable (Event) -> Parent) {
        self.parent = parent
        self.embed = embed
    }

    @inlinable
    func receive(_ event: Event, from handle: EffectHandle?) {
        parent.receive(embed(event), from: handle)
    }

    @inlinable
    func finish(_ handle: EffectHandle, sending event: Event?) {
        parent.finish(handle, sending: event.map(embed))
    }
}
