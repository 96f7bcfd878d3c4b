@testable import FeedbackLoop
import Testing

/// The `stream` host's mailbox keeps the contract of the `AsyncStream` it replaced: nothing
/// posted is lost, a cancelled host gets what was pending and then `nil`, and a closed mailbox
/// refuses, so that the driver hands the refused signal over (see `StreamDriver.send`).
@Suite("The stream host's mailbox")
struct HostMailboxTests {
    typealias Mailbox = HostMailbox<Int, Int>

    static func isDrain(_ signal: Mailbox.Signal?) -> Bool {
        if case .drain(.event(let event, nil))? = signal { return event == 1 }
        return false
    }

    @Test
    func aSignalPostedBeforeTheHostWaitsIsTakenAtOnce() async {
        let mailbox = Mailbox()
        #expect(mailbox.post(.drain(.event(1, nil))))
        #expect(Self.isDrain(await mailbox.next(cancellable: false)))
    }

    @Test
    func aWaitingHostIsWokenByThePost() async throws {
        let mailbox = Mailbox()
        let host = Task { await mailbox.next(cancellable: false) }
        try await waitUntil("the host to wait") { mailbox.contents.withLock { $0.host != nil } }
        #expect(mailbox.post(.drain(.event(1, nil))))
        #expect(Self.isDrain(await host.value))
    }

    @Test
    func wakeUpsFromEndingEffectsNeedNoCountAndComeAfterTheDrainRolesSignal() async {
        let mailbox = Mailbox()
        #expect(mailbox.post(.childrenEnded))
        #expect(mailbox.post(.childrenEnded))
        #expect(mailbox.post(.drain(.event(1, nil))))
        #expect(Self.isDrain(await mailbox.next(cancellable: false)))
        guard case .childrenEnded? = await mailbox.next(cancellable: false) else {
            Issue.record("the wake-up was lost")
            return
        }
        mailbox.close()
        #expect(await mailbox.next(cancellable: false) == nil, "two wake-ups are one")
    }

    @Test
    func aCancelledHostGetsWhatWasPendingThenNilAndLaterPostsAreRefused() async throws {
        let mailbox = Mailbox()
        #expect(mailbox.post(.drain(.event(1, nil))))
        let host = Task {
            await withUnsafeContinuation { (parked: UnsafeContinuation<Void, Never>) in parked.resume() }
            withUnsafeCurrentTask { $0?.cancel() }
            let first = await mailbox.next(cancellable: true)
            let second = await mailbox.next(cancellable: true)
            return (Self.isDrain(first), second == nil)
        }
        let (gotPending, thenNil) = await host.value
        #expect(gotPending, "what was posted before the cancellation is still delivered")
        #expect(thenNil)
        #expect(!mailbox.post(.tearDown), "a closed mailbox refuses, so that the driver hands the signal over")
    }

    @Test
    func cancellingAWaitingHostWakesItWithNil() async throws {
        let mailbox = Mailbox()
        let host = Task { await mailbox.next(cancellable: true) }
        try await waitUntil("the host to wait") { mailbox.contents.withLock { $0.host != nil } }
        host.cancel()
        #expect(await host.value == nil)
        #expect(!mailbox.post(.drain(.event(1, nil))))
    }

    @Test
    func aHostInATaskOfItsOwnIgnoresCancellation() async throws {
        let mailbox = Mailbox()
        let host = Task { await mailbox.next(cancellable: false) }
        try await waitUntil("the host to wait") { mailbox.contents.withLock { $0.host != nil } }
        host.cancel()
        #expect(mailbox.post(.drain(.event(1, nil))), "only a close refuses")
        #expect(Self.isDrain(await host.value))
    }
}
