@testable import FeedbackLoop
import SharedTestSupport
import Testing

/// How the `stream` host is woken. An idle host parks in the loop's own lock (``HostSlot``),
/// where a sender that finds the loop idle takes the drain role and the host at once; everything
/// else goes through its mailbox, which keeps the contract of the `AsyncStream` it replaced:
/// nothing posted is lost, a cancelled host gets what was pending and then `closed`, and a
/// closed mailbox refuses, so that the driver hands the refused signal over (see
/// `StreamDriver.send`).
@Suite("The stream host's wake-up: its slot in the loop's lock and its mailbox")
struct HostWakeUpTests {
    typealias Mailbox = HostMailbox<Int, Int>
    typealias Slot = HostSlot<Int>

    static func isDrain(_ mail: Mailbox.Mail) -> Bool {
        if case .signal(.drain(.event(let event, nil))) = mail { return event == 1 }
        return false
    }

    static func isEmpty(_ mail: Mailbox.Mail) -> Bool {
        if case .empty = mail { return true }
        return false
    }

    static func isParked<Event>(_ slot: HostSlot<Event>) -> Bool {
        if case .parked = slot { return true }
        return false
    }

    /// Runs `body` with a continuation it may park in a slot, and resumes it afterwards.
    static func withHost(_ body: (UnsafeContinuation<HostWake<Int>, Never>) -> Void) async {
        let _: HostWake<Int> = await withUnsafeContinuation { host in
            body(host)
            host.resume(returning: .mail)
        }
    }

    // MARK: The slot

    @Test
    func mailPostedWhileTheHostRunsMakesItLookBeforeItParks() async {
        await Self.withHost { host in
            var slot = Slot.away
            let woken = slot.post()
            #expect(woken == nil, "nobody is parked to wake")
            let parkedAtOnce = slot.park(host)
            #expect(!parkedAtOnce, "a post it has not seen: the host looks in its mailbox first")
            let parked = slot.park(host)
            #expect(parked, "it has looked: now it parks")
            #expect(Self.isParked(slot))
        }
    }

    @Test
    func aPostWakesAParkedHostToLookInItsMailbox() async {
        await Self.withHost { host in
            var slot = Slot.away
            let parked = slot.park(host)
            #expect(parked)
            let woken = slot.post()
            #expect(woken != nil)
            guard case .away = slot else {
                Issue.record("the woken host is no longer parked: \(slot.stateName)")
                return
            }
        }
    }

    @Test
    func aSenderTakesOnlyAParkedHostAndLeavesItsMailMark() async {
        await Self.withHost { host in
            var slot = Slot.away
            let none = slot.takeForEvent()
            #expect(none == nil)
            _ = slot.post()
            let notParked = slot.takeForEvent()
            #expect(notParked == nil, "a host that is not parked gets the event through its mailbox")
            let parkedDespiteMail = slot.park(host)
            #expect(!parkedDespiteMail, "the mail mark survives a sender that found no host")
            let parked = slot.park(host)
            #expect(parked)
            let taken = slot.takeForEvent()
            #expect(taken != nil)
            let again = slot.takeForEvent()
            #expect(again == nil, "a host is woken once")
        }
    }

    // MARK: The mailbox

    static func isPosted(_ post: Mailbox.Post) -> Bool {
        if case .posted = post { return true }
        return false
    }

    @Test
    func aSignalPostedBeforeTheHostLooksIsTakenOnce() {
        var mailbox = Mailbox()
        let result1 = mailbox.post(.drain(.event(1, nil)))
        #expect(Self.isPosted(result1))
        let result2 = mailbox.take()
        #expect(Self.isDrain(result2))
        let result3 = mailbox.take()
        #expect(Self.isEmpty(result3))
    }

    @Test
    func wakeUpsFromEndingEffectsNeedNoCountAndComeAfterTheDrainRolesSignal() {
        var mailbox = Mailbox()
        let result4 = mailbox.postChildrenEnded()
        #expect(result4)
        let result5 = mailbox.postChildrenEnded()
        #expect(result5)
        let result6 = mailbox.post(.drain(.event(1, nil)))
        #expect(Self.isPosted(result6))
        let result7 = mailbox.take()
        #expect(Self.isDrain(result7))
        guard case .signal(.childrenEnded) = mailbox.take() else {
            Issue.record("the wake-up was lost")
            return
        }
        let result8 = mailbox.take()
        #expect(Self.isEmpty(result8), "two wake-ups are one")
    }

    @Test
    func aClosedMailboxHandsOutWhatWasPendingThenClosedAndHandsLaterSignalsOver() {
        var mailbox = Mailbox()
        let result9 = mailbox.claimHost()
        #expect(result9)
        let result10 = mailbox.post(.drain(.event(1, nil)))
        #expect(Self.isPosted(result10))
        mailbox.close()
        let result11 = mailbox.take()
        #expect(Self.isDrain(result11), "what was posted before the close is still delivered")
        guard case .closed = mailbox.take() else {
            Issue.record("a closed mailbox did not say so")
            return
        }
        let result12 = mailbox.postChildrenEnded()
        #expect(!result12, "nothing to wake once closed")
        guard case .handedOver = mailbox.post(.tearDown) else {
            Issue.record("a signal posted to a closed mailbox was not handed to the leaving host")
            return
        }
        guard case .tearDown? = mailbox.leave() else {
            Issue.record("the leaving host did not get the signal handed over")
            return
        }
        let result13 = mailbox.leave()
        #expect(result13 == nil, "the host has gone")
        guard case .handleHere = mailbox.post(.tearDown) else {
            Issue.record("once the host has gone, the poster handles its signal")
            return
        }
        let result14 = mailbox.claimHost()
        #expect(!result14, "a loop is hosted once")
    }

    // MARK: The host

    /// The lock that releases the drain role at the end of a wake-up's pass parks the host, so
    /// that the next sender takes the role and the host in one lock. Every event is reduced,
    /// in order.
    @Test
    func anIdleHostParksInTheLockThatReleasesTheRoleAndEachSendWakesIt() async throws {
        let loop = Loop(initial: Counter.State(), reduce: Counter.reduce, backend: .stream)
        for value in 1...50 {
            loop.send(.record(value))
            await loop.engine.waitUntil { $0.published.history.count == value && $0.isIdle && Self.isParked($0.host) }
        }
        #expect(loop.state.history == Array(1...50))
        await loop.stop()
    }

    /// A wake-up whose pass starts a `.run` effect does not park the host in the lock that
    /// releases the role: the effect waits for the host to add it to its group, so the effect
    /// starts with no further wake-up.
    @Test
    func aWakeUpThatStartsAnEffectStartsItWithNoFurtherWakeUp() async throws {
        let ended = CountdownLatch()
        let loop = Loop(
            initial: Counter.State(), reduce: Counter.reduce,
            feedbacks: [.skippingRepeated({ $0.count }) { _ in .run { _ in ended.increment() } }],
            backend: .stream)
        for count in 1...20 {
            // Idle, the previous effect's entry gone: the send wakes a parked host, and its pass
            // alone starts the effect.
            await loop.waitUntilIdle()
            loop.send(.increment)
            try await withDeadline("the effect of count \(count)", limit: .seconds(30)) { await ended.wait(for: count + 1) }
        }
        await loop.stop()
    }

    /// A host in a cancellable task (``Loop/run()``'s caller) parked in the loop's lock is woken
    /// by the cancellation, stops the loop and returns.
    @Test
    func cancellingTheRunCallerWakesAParkedHost() async throws {
        let loop = Loop(
            initial: Counter.State(), reduce: Counter.reduce, backend: .stream,
            configuration: LoopConfiguration(hosting: .run))
        let runner = Task { await loop.run() }
        loop.send(.increment)
        await loop.engine.waitUntil { $0.published.count == 1 && Self.isParked($0.host) }
        runner.cancel()
        try await withDeadline("run() to return once cancelled", limit: .seconds(30)) { await runner.value }
        await loop.stop()
        loop.send(.increment)
        #expect(loop.state.count == 1, "the loop stopped")
    }
}
