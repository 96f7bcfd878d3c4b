/// The `callback` backend: the machine is driven in place by whichever thread holds the drain
/// role — the thread whose `send` found the loop idle, or an effect's thread, or the one that
/// called `stop()`. Events queued meanwhile by other threads are drained in the same pass, so
/// there is no thread hop and no task per event.
///
/// A struct, so that the ``Driver`` enum holds the machine's reference itself: a class here was
/// one more object (32 bytes) per idle loop, with nothing of its own to keep.
@usableFromInline
struct CallbackDriver<State: Sendable, Event: Sendable>: LoopDriver, @unchecked Sendable {
    // @unchecked: `machine` is touched only by the holder of the drain role. The role is taken and
    // released under `LoopCore.lock` (see `CoreState`), which orders every access between threads.
    @usableFromInline let machine: Machine<State, Event>

    @inlinable
    init(machine: Machine<State, Event>) {
        self.machine = machine
    }

    /// Reduces the sender's event on the calling thread, with no queue item, before `send`
    /// returns.
    @inlinable
    func drain(_ core: LoopCore<State, Event>, event: Event, from handle: EffectHandle?) {
        core.reduceInPlace(machine, event: event, from: handle)
    }

    /// Drains on the calling thread, before the caller returns.
    @inlinable
    func drain(_ core: LoopCore<State, Event>, startingWith item: QueueItem<State, Event>) {
        core.drainPass(machine, first: item)
    }

    @inlinable
    func stopBegan(_ core: LoopCore<State, Event>, tearDown: Bool) {
        if tearDown { core.tearDown(machine) }
    }

    @inlinable
    func stopBeganInCaller(_ core: LoopCore<State, Event>, tearDown: Bool) async {
        if tearDown { core.tearDown(machine) }
    }
}
