#if Durable
import Foundation
import Logging

/// How a ``DurableLoop`` journals: the feature's name, snapshot interval, schema version, batch
/// size.
public struct DurableConfiguration: Sendable {
    /// The name of the feature whose records the loop journals, stored with the loop's journal
    /// the first time a loop opens it and checked every time one opens it again: opening a loop
    /// id that another feature journaled fails with
    /// ``DurableLoopError/featureMismatch(loop:journaled:opening:)`` and writes nothing, rather
    /// than decoding one feature's records as another's (two `Event` types can read the same
    /// JSON, and then nothing else would catch it).
    ///
    /// `nil` (the default) names the feature after its types:
    /// ``defaultFeature(state:event:)``, such as `"Orders.Orders.State, Orders.Orders.Event"`.
    /// That name changes when the types or their module are renamed, or when a new version of
    /// the types is kept beside the old one under another name; the loop then refuses to open,
    /// and the error says which name the journal holds. Set this to a stable name of your own
    /// (`"orders"`) before such a change, or set it to the name the error shows after it. A
    /// store records the name per loop id; a loop journaled before stores recorded names (or by
    /// a store that does not record them) takes the name of the first loop that opens it.
    public var feature: String?

    /// A snapshot of the state is written every this many events, in the same transaction as the
    /// event that reaches the multiple (or the batch that crosses it); `nil` writes none, so that
    /// recovery replays the whole journal. Default: 1,000.
    public var snapshotEvery: Int?

    /// The version written with every record. At recovery, a record with a newer version fails
    /// with ``DurableLoopError/unsupportedSchemaVersion(loop:sequence:found:supported:)``; an
    /// older one is decoded with its version in the decoder's `userInfo` under
    /// `CodingUserInfoKey.durableSchemaVersion`, so that `init(from:)` can read old
    /// shapes. Default: 1.
    public var schemaVersion: Int

    /// At most this many events go into one transaction. Default: 1,024.
    public var maximumBatch: Int

    /// Where the durable layer logs recovery, stops and failed appends.
    public var logger: Logger

    /// A configuration; every parameter has the default described on its property.
    public init(
        feature: String? = nil,
        snapshotEvery: Int? = 1_000,
        schemaVersion: Int = 1,
        maximumBatch: Int = 1_024,
        logger: Logger = Logger(label: "FeedbackLoopDurable")
    ) {
        precondition(snapshotEvery.map { $0 > 0 } ?? true, "snapshotEvery must be positive (or nil for none)")
        precondition(maximumBatch > 0, "maximumBatch must be positive")
        self.feature = feature
        self.snapshotEvery = snapshotEvery
        self.schemaVersion = schemaVersion
        self.maximumBatch = maximumBatch
        self.logger = logger
    }
}

extension DurableConfiguration {
    /// The feature name a ``DurableLoop`` of `State` and `Event` records when
    /// ``feature`` is `nil`: both types' names with their module, as `String(reflecting:)`
    /// prints them, less the anonymous context of a `private` or local type (printed with an
    /// address that changes from run to run).
    ///
    /// It is the same from build to build while the types and their module keep their names.
    public static func defaultFeature<State, Event>(state: State.Type, event: Event.Type) -> String {
        "\(stableName(of: state)), \(stableName(of: event))"
    }

    static func stableName(of type: Any.Type) -> String {
        let marker = "(unknown context at $"
        var name = String(reflecting: type)[...]
        var stable = ""
        while let start = name.range(of: marker) {
            stable += name[..<start.lowerBound]
            name = name[start.upperBound...]
            guard let end = name.firstIndex(of: ")") else { break }
            name = name[name.index(after: end)...]
            if name.first == "." { name = name.dropFirst() }
        }
        return stable + name
    }

    /// The name this configuration records for a loop of `State` and `Event`.
    @usableFromInline
    func featureName<State, Event>(state: State.Type, event: Event.Type) -> String {
        feature ?? Self.defaultFeature(state: state, event: event)
    }
}

extension CodingUserInfoKey {
    /// The schema version (`Int`) a journaled record was written with, in the decoder's
    /// `userInfo` while a ``DurableLoop`` recovers.
    public static let durableSchemaVersion = CodingUserInfoKey(rawValue: "FeedbackLoopDurable.schemaVersion")!
}

extension Decoder {
    /// The schema version the record being decoded was written with, while a ``DurableLoop``
    /// recovers (or a replay check reads); `nil` elsewhere. Read it in `init(from:)` to decode
    /// an older shape into the current type: see <doc:EvolvingADurableFeature>.
    public var durableSchemaVersion: Int? {
        userInfo[.durableSchemaVersion] as? Int
    }
}

/// The key an effect passes downstream so that a repeated request can be recognised: effects of
/// a recovered loop start again (at-least-once), and a payment service, say, must not charge
/// twice.
///
/// ``stableKey`` is the same for the same loop, feedback and query across restarts: dedupe on
/// it. ``epoch`` says which owner issued the request: a downstream service that remembers the
/// highest epoch per key can refuse a deposed owner's late request.
public struct IdempotencyKey: Sendable, Hashable, CustomStringConvertible {
    /// The loop's id.
    public let loop: String
    /// The feedback's name, as given to ``DurableContext/idempotencyKey(feedback:query:)``.
    public let feedback: String
    /// The query that started the effect, encoded as JSON with sorted keys.
    public let query: String
    /// The ownership epoch of the loop that started the effect.
    public let epoch: UInt64

    /// `loop/feedback/query`: equal for the same effect across restarts.
    public var stableKey: String { "\(loop)/\(feedback)/\(query)" }

    /// `loop/feedback/query@epoch`.
    public var description: String { "\(stableKey)@\(epoch)" }
}

/// What a ``DurableLoop`` tells its feedbacks when it builds them: which loop, which owner.
public struct DurableContext: Sendable {
    /// The loop's id.
    public let loopID: String
    /// The ownership epoch this run of the loop holds (see ``EventJournal/acquire(loop:)``).
    public let epoch: UInt64

    @usableFromInline
    init(loopID: String, epoch: UInt64) {
        self.loopID = loopID
        self.epoch = epoch
    }

    /// The idempotency key of the effect `feedback` starts for `query`.
    ///
    /// - Throws: the query's `EncodingError` (a query that JSON cannot encode, such as `Double.nan`).
    public func idempotencyKey(feedback: String, query: some Encodable) throws -> IdempotencyKey {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(query)
        return IdempotencyKey(loop: loopID, feedback: feedback, query: String(decoding: data, as: UTF8.self), epoch: epoch)
    }
}
#endif
