import FeedbackLoop
import Foundation

/// The events of a recorded run, read back from the JSON-lines file an ``EventRecorder``
/// wrote, ready to replay into a fresh loop — the way to turn a bug seen in production into a
/// test.
///
/// ```swift
/// let recording = try EventRecording<Pharmacies.Event>(contentsOf: url)
/// let replayed = Loop(initial: .loading, reduce: Pharmacies.reduce)   // no feedbacks
/// let states = try await recording.replay(into: replayed)
/// ```
///
/// Replay into a loop built from the same initial state and reducer, **without feedbacks**:
/// the recording already holds every event the effects sent, so running the effects again
/// would add events the original run never saw.
public struct EventRecording<Event: Sendable & Decodable>: Sendable {
    /// The recorded events, in the order the original loop reduced them.
    public var events: [Event]

    /// A recording of the given events.
    public init(events: [Event]) {
        self.events = events
    }

    /// Reads a recording from a JSON-lines file: one JSON-encoded event per line; blank lines
    /// are ignored.
    ///
    /// - Throws: ``EventRecordingError`` naming the first line that does not decode, or the
    ///   file system's error when the file cannot be read.
    public init(contentsOf url: URL) throws {
        try self.init(jsonLines: Data(contentsOf: url), source: url.path)
    }

    /// Reads a recording from JSON-lines data. See ``init(contentsOf:)``.
    public init(jsonLines data: Data, source: String = "recording") throws {
        let decoder = JSONDecoder()
        var events: [Event] = []
        var lineNumber = 0
        for line in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            guard line.contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\r") }) else { continue }
            do {
                events.append(try decoder.decode(Event.self, from: Data(line)))
            } catch {
                throw EventRecordingError(source: source, line: lineNumber, reason: String(describing: error))
            }
        }
        self.events = events
    }

    /// Sends every event into `loop`, one at a time, each after the previous one was reduced,
    /// and returns the state right after each event: the state sequence of the recorded run
    /// when `loop` starts from the same initial state with the same reducer and no feedbacks.
    ///
    /// - Throws: `LoopError.stopped` if `loop` stops during the replay.
    public func replay<State: Sendable>(into loop: Loop<State, Event>) async throws -> [State] {
        var states: [State] = []
        states.reserveCapacity(events.count)
        for event in events {
            states.append(try await loop.sendAndWait(event))
        }
        return states
    }
}

/// A line of a recording that could not be decoded.
public struct EventRecordingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file (or the `source` label) that was being read.
    public var source: String
    /// The 1-based number of the offending line.
    public var line: Int
    /// What the decoder said.
    public var reason: String

    public var description: String {
        "\(source):\(line): not a recorded event: \(reason)"
    }
}
