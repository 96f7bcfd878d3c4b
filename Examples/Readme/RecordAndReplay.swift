import FeedbackLoopRecording
import Foundation

enum Light: Sendable, Equatable { case red, green, yellow }
enum Signal: Sendable, Equatable, Codable { case next, fault }     // recorded events are Codable

func reduce(_ light: inout Light, _ signal: Signal) {
    switch (light, signal) {
    case (.red, .next): light = .green
    case (.green, .next): light = .yellow
    case (.yellow, .next), (_, .fault): light = .red
    }
}

let log = TransitionLog<Light, Signal>()
let url = FileManager.default.temporaryDirectory.appending(path: "light.jsonl")
let recorder = try EventRecorder<Signal>(writingTo: url)            // JSON lines: a production bug becomes a test
let loop = Loop(initial: Light.red, reduce: reduce,
                instrumentation: .combining([log.instrumentation, recorder.instrumentation()]))
for signal in [Signal.next, .next, .fault, .next] { try await loop.sendAndWait(signal) }
await loop.stop()
try recorder.close()
print(StateDiagram(log.transitions).mermaid)                        // after the run; `.dot` for Graphviz

let replayed = try await EventRecording<Signal>(contentsOf: url)    // the same events into a fresh loop, no feedbacks
    .replay(into: Loop(initial: Light.red, reduce: reduce))
print(replayed == log.states)                                       // true: the same states, in the same order
