/// The `callback` backend: the state's owner is driven in place by whichever thread holds the drain
/// role — the thread whose `send` found the loop idle, or an effect's thread, or the one that
/// called `stop()`. Events queued meanwhile by other threads are drained in the same pass, so
/// there is no thread hop and no task per event.
///
/// A struct, so that the ``Driver`` enum holds the owner's reference itself: a class here was
/// one more object (32 bytes) per idle loop, with nothing of its own to keep.
@usableFromInline
struct CallbackDriver<State: Sendable, Event: Sendable>: LoopDriver, @unchecked Sendable {
    // @unchecked: `owner` is touched only by the holder of the drain role. The role is taken and
    // released under `LoopEngine.lock` (see `LoopStateMachine`), which orders every access between threads.
    @usableFromInline let owner: StateOwner<State, Event>

    @inlinable
    init(owner: StateOwner<State, Event>) {
        self.owner = owner
    }

    /// Reduces the sender's event on the calling thread, with no queue item, before `send`
    /// returns.
    @inlinable
    func drain(_ engine: LoopEngine<State, Event>, event: Event, from handle: EffectHandle?) {
        engine.reduceInPlace(owner, event: event, from: handle)
    }

    /// Drains on the calling thread, before the caller returns.
    @inlinable
    func drain(_ engine: LoopEngine<State, Event>, startingWith item: QueueItem<State, Event>) {
        engine.drainPass(owner, first: item)
    }

    @inlinable
    func stopBegan(_ engine: LoopEngine<State, Event>, tearDown: Bool) {
        if tearDown { engine.tearDown(owner) }
    }

    @inlinable
    @inline(__always)
    func stopBeganInCaller(_ engine: LoopEngine<State, Event>, tearDown: Bool) async {
        if tearDown { engine.tearDown(owner) }
    }
}
