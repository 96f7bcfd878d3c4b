import FeedbackLoop
import Testing

@Test(arguments: Backend.allCases)
func smoke(backend: Backend) async throws {
    let loop = Loop<Int, Int>(
        initial: 0,
        reduce: { $0 += $1 },
        feedbacks: [
            .skippingRepeated({ $0 < 10 ? $0 : nil }) { n in .send(1) },
            .requests({ s in Set(s >= 10 && s < 13 ? [s] : []) }) { n in .run { send in send(1) } },
        ],
        backend: backend)
    await loop.waitUntilIdle()
    #expect(loop.state == 13)
    let s = try await loop.sendAndWait(100)
    #expect(s == 113)
    await loop.stop()
    print(loop.statistics)
}
