import FeedbackLoop
import FeedbackLoopRecording
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5))) struct RecordReplayTests {
    /// Records a run whose effects fail, succeed and echo, then replays the file into a loop
    /// without feedbacks: the same states, in the same order.
    @Test(arguments: Backend.allCases)
    func aReplayReproducesTheRecordedStateSequence(backend: Backend) async throws {
        let url = temporaryFile()
        defer { try? FileManager.default.removeItem(at: url) }
        let recorder = try EventRecorder<Basket.Event>(writingTo: url)
        let log = TransitionLog<Basket.State, Basket.Event>()
        let loop = Loop(
            initial: .loading,
            reduce: Basket.reduce,
            feedbacks: Basket.feedbacks { attempt in
                guard attempt > 1 else { throw Basket.Offline() }
                return ["milk"]
            },
            backend: backend,
            instrumentation: .combining([recorder.instrumentation(), log.instrumentation]))

        await loop.waitUntilIdle()
        loop.send(.ui(.retry))
        await loop.waitUntilIdle()
        loop.send(.ui(.add("eggs")))
        await loop.waitUntilIdle()
        try await loop.sendAndWait(.ui(.retry))  // ignored in `loaded`: recorded, changes nothing
        await loop.stop()
        try recorder.close()

        let recorded: [Basket.State] = [
            .loadingFailed("offline"), .loading, .loaded(["milk"]), .adding(["milk"], "eggs"),
            .loaded(["milk", "eggs"]), .loaded(["milk", "eggs"]),
        ]
        #expect(log.states == recorded)
        #expect(recorder.recordedCount == recorded.count)

        let recording = try EventRecording<Basket.Event>(contentsOf: url)
        #expect(recording.events == log.events)

        let fresh = Loop(initial: Basket.State.loading, reduce: Basket.reduce, backend: backend)
        let replayed = try await recording.replay(into: fresh)
        #expect(replayed == recorded)
        await fresh.stop()
    }

    @Test func theFileHoldsOneJSONEventPerLine() throws {
        let url = temporaryFile()
        defer { try? FileManager.default.removeItem(at: url) }
        let recorder = try EventRecorder<Basket.Event>(writingTo: url)
        recorder.record(.ui(.add("a/b")))
        recorder.record(.loaded([]))
        try recorder.close()
        recorder.record(.loaded(["after close"]))  // not written

        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(text == #"{"ui":{"_0":{"add":{"_0":"a/b"}}}}"# + "\n" + #"{"loaded":{"_0":[]}}"# + "\n")
    }

    @Test func aMalformedLineIsReportedWithItsNumber() throws {
        let data = Data((#"{"loaded":{"_0":[]}}"# + "\n\n" + #"{"unknown":{}}"# + "\n").utf8)
        #expect {
            _ = try EventRecording<Basket.Event>(jsonLines: data, source: "bug-4711.jsonl")
        } throws: { error in
            let error = try #require(error as? EventRecordingError)
            return error.line == 3 && error.source == "bug-4711.jsonl"
                && error.description.hasPrefix("bug-4711.jsonl:3: not a recorded event")
        }
    }

    @Test func anEventThatCannotBeEncodedIsReportedAtClose() throws {
        struct Unencodable: Encodable, Sendable {
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "refused"))
            }
        }
        let url = temporaryFile()
        defer { try? FileManager.default.removeItem(at: url) }
        let recorder = try EventRecorder<Unencodable>(writingTo: url)
        recorder.record(Unencodable())
        #expect(recorder.recordedCount == 0)
        #expect(throws: EncodingError.self) { try recorder.close() }
    }

    @Test func aRecorderCannotBeCreatedWhereNoFileCanBe() {
        #expect(throws: (any Error).self) {
            _ = try EventRecorder<Basket.Event>(writingTo: URL(fileURLWithPath: "/nonexistent-dir/events.jsonl"))
        }
    }
}

func temporaryFile() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("feedbackloop-\(UUID().uuidString).jsonl")
}
