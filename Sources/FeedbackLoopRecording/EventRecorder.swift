import FeedbackLoop
import Foundation

/// Writes every event a loop reduces to a file, one JSON document per line, in the order the
/// loop reduced them — the input an ``EventRecording`` replays into a fresh loop to reproduce
/// the exact same sequence of states.
///
/// ```swift
/// let recorder = try EventRecorder<Pharmacies.Event>(writingTo: url)
/// let loop = Loop(initial: .loading, reduce: Pharmacies.reduce, feedbacks: feedbacks,
///                 instrumentation: recorder.instrumentation())
/// // … later, when the bug has happened …
/// try recorder.close()
/// ```
///
/// Only reduced events are written: events the loop dropped (after stop, over capacity, from a
/// cancelled effect) never changed state, so a replay must not see them either. Events sent by
/// effects are recorded like any other, which is why a replay runs without feedbacks.
///
/// Each line is written to the file as the loop reduces the event (one `write` per event, on
/// the loop's drain thread), so a crash loses at most the event being written. That costs a
/// system call and a JSON encoding per event: record while chasing a bug, not in every
/// production loop.
public final class EventRecorder<Event: Sendable & Encodable>: Sendable {
    private struct Output {
        var handle: FileHandle?
        var encoder: JSONEncoder
        var count = 0
        var firstError: (any Error)?
    }

    private let output: Locked<Output>

    /// The file being written.
    public let url: URL

    /// Creates the file at `url` (replacing any file already there) and prepares to record.
    ///
    /// - Throws: an error from the file system when the file cannot be created or opened.
    public init(writingTo url: URL) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        let handle = try FileHandle(forWritingTo: url)
        let encoder = JSONEncoder()
        // One event per line: pretty-printing would break the format, sorted keys keep files diffable.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        self.url = url
        self.output = Locked(Output(handle: handle, encoder: encoder))
    }

    deinit {
        try? close()
    }

    /// The instrumentation that records each event the loop reduces. Combine it with others
    /// through `LoopInstrumentation.combining(_:)`.
    public func instrumentation<State: Sendable>(
        for state: State.Type = State.self
    ) -> LoopInstrumentation<State, Event> {
        LoopInstrumentation(onTransition: { [self] _, event, _ in record(event) })
    }

    /// Appends `event` to the file. The instrumentation calls this for every reduced event;
    /// call it yourself only when you feed the recorder by hand.
    ///
    /// After the first failure (an event that does not encode, a full disk) nothing more is
    /// written, so the file never has a gap in the middle; ``close()`` throws that failure.
    public func record(_ event: Event) {
        output.withLock { output in
            guard let handle = output.handle, output.firstError == nil else { return }
            do {
                var line = try output.encoder.encode(event)
                line.append(UInt8(ascii: "\n"))
                try handle.write(contentsOf: line)
                output.count += 1
            } catch {
                output.firstError = error
            }
        }
    }

    /// How many events have been written so far.
    public var recordedCount: Int {
        output.withLock { $0.count }
    }

    /// Flushes and closes the file. Events reduced afterwards are not recorded. Idempotent.
    ///
    /// - Throws: the first error met while encoding or writing an event, or while closing.
    public func close() throws {
        let (handle, error) = output.withLock { output -> (FileHandle?, (any Error)?) in
            defer {
                output.handle = nil
                output.firstError = nil
            }
            return (output.handle, output.firstError)
        }
        try handle?.synchronize()
        try handle?.close()
        if let error { throw error }
    }
}
