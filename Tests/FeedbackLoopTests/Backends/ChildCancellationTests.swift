@testable import FeedbackLoop
import Foundation
import Testing

/// The `stream` backend cancels one effect alone by cancelling the child task its body runs in,
/// which the task lends to the effect's `ChildCancellation` (see `ChildEffect`). The lent
/// `UnsafeCurrentTask` is valid only while its task lives, so a body that ends while the loop is
/// cancelling its task must wait for that cancel to finish before the task may end.
@Suite("The stream backend's cancellation of one child task")
struct ChildCancellationTests {
    @Test
    func aCancelBeforeTheTaskLendsItselfCancelsTheTaskAsItStarts() async {
        let cancellation = ChildCancellation()
        cancellation.cancel()
        let sawCancellation = await Task {
            withUnsafeCurrentTask { cancellation.lend($0) }
            return Task.isCancelled
        }.value
        #expect(sawCancellation, "the body of an effect cancelled before its task started ran in a task not cancelled")
        #expect(cancellation.leave())
    }

    @Test
    func aCancelWhileTheBodyRunsCancelsTheLentTask() async throws {
        let cancellation = ChildCancellation()
        let lent = Gate()
        let task = Task {
            withUnsafeCurrentTask { cancellation.lend($0) }
            lent.open()
            await suspendUntilCancelled()
            return cancellation.leave()
        }
        await lent.wait()
        cancellation.cancel()
        let leftAtOnce = try await withDeadline("the lent task to see its cancellation") { await task.value }
        #expect(leftAtOnce, "the cancel had finished, yet leave() asked the task to wait")
    }

    /// Driven half by half (``ChildCancellation/beginCancel()``, then
    /// ``ChildCancellation/endCancel()``), because a real cancel's window cannot be held open: the
    /// run time runs a task's cancellation handlers under the task's own status lock, which the
    /// task needs to leave its handler's scope, so a handler that blocked would block the task.
    @Test
    func aBodyThatEndsWhileItsTaskIsBeingCancelledWaitsForTheCancelToFinish() async throws {
        let cancellation = ChildCancellation()
        let lent = Gate()
        let bodyMayEnd = Gate()
        let ended = Locked(false)
        let task = Task {
            withUnsafeCurrentTask { cancellation.lend($0) }
            lent.open()
            await bodyMayEnd.wait()
            if !cancellation.leave() { await cancellation.cancelFinished() }
            ended.withLock { $0 = true }
        }
        await lent.wait()
        #expect(cancellation.beginCancel())
        bodyMayEnd.open()
        try await waitUntil("the body to end, and to wait for the cancel or go") {
            ended.current || cancellation.phase.load(ordering: .acquiring) == ChildCancellation.awaited
        }
        #expect(!ended.current, "the task ended while a cancel still used it")
        cancellation.endCancel()
        try await withDeadline("the task to end once the cancel finished") { await task.value }
        #expect(ended.current)
    }
}
