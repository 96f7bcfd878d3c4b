import FeedbackLoopDurableTesting
import Foundation
import Testing

@testable import FeedbackLoopDurable

/// The events' encoder writes JSON that `JSONDecoder` reads back as `JSONEncoder`'s, byte for
/// byte where it writes it itself, and hands `JSONEncoder` what it does not.
@Suite("The journal's event encoder")
struct JournalEncoderTests {
    struct Order: Codable, Equatable {
        var id: Int
        var note: String?
        var lines: [Line]
        var tags: [String: Int]
        var byNumber: [Int: String]
        var when: Date
        var flags: [Bool?]
        var ratio: Double
        var small: Float
        var bytes: [UInt8]
        var widths: (Int8, UInt16, Int32, UInt64)

        struct Line: Codable, Equatable {
            var sku: String
            var quantity: UInt
        }

        enum CodingKeys: String, CodingKey { case id, note, lines, tags, byNumber, when, flags, ratio, small, bytes, widthA, widthB, widthC, widthD }

        init(id: Int, note: String?) {
            self.id = id
            self.note = note
            lines = [Line(sku: "a/b \"quoted\" \\ é 😀 \u{1}\n\t", quantity: 3), Line(sku: "", quantity: 0)]
            tags = ["one": 1]
            byNumber = [7: "seven"]
            when = Date(timeIntervalSinceReferenceDate: 12_345.678)
            flags = [true, nil, false]
            ratio = 0.1
            small = 1.5
            bytes = [0, 255]
            widths = (-8, 16, -32, .max)
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            id = try c.decode(Int.self, forKey: .id)
            note = try c.decodeIfPresent(String.self, forKey: .note)
            lines = try c.decode([Line].self, forKey: .lines)
            tags = try c.decode([String: Int].self, forKey: .tags)
            byNumber = try c.decode([Int: String].self, forKey: .byNumber)
            when = try c.decode(Date.self, forKey: .when)
            flags = try c.decode([Bool?].self, forKey: .flags)
            ratio = try c.decode(Double.self, forKey: .ratio)
            small = try c.decode(Float.self, forKey: .small)
            bytes = try c.decode([UInt8].self, forKey: .bytes)
            widths = (
                try c.decode(Int8.self, forKey: .widthA), try c.decode(UInt16.self, forKey: .widthB),
                try c.decode(Int32.self, forKey: .widthC), try c.decode(UInt64.self, forKey: .widthD)
            )
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            try c.encodeIfPresent(note, forKey: .note)
            try c.encode(lines, forKey: .lines)
            try c.encode(tags, forKey: .tags)
            try c.encode(byNumber, forKey: .byNumber)
            try c.encode(when, forKey: .when)
            try c.encode(flags, forKey: .flags)
            try c.encode(ratio, forKey: .ratio)
            try c.encode(small, forKey: .small)
            try c.encode(bytes, forKey: .bytes)
            try c.encode(widths.0, forKey: .widthA)
            try c.encode(widths.1, forKey: .widthB)
            try c.encode(widths.2, forKey: .widthC)
            try c.encode(widths.3, forKey: .widthD)
        }

        static func == (a: Order, b: Order) -> Bool {
            a.id == b.id && a.note == b.note && a.lines == b.lines && a.tags == b.tags && a.byNumber == b.byNumber && a.when == b.when
                && a.flags == b.flags && a.ratio == b.ratio && a.small == b.small && a.bytes == b.bytes && a.widths == b.widths
        }
    }

    enum Event: Codable, Equatable {
        case add(Int)
        case rename(name: String, previous: String?)
        case place(Order)
        case reset
        case nested([[Int]], Double)
    }

    /// What `JournalEncoder` hands to `JSONEncoder`, each with the same result.
    struct Special: Codable, Equatable {
        var data = Data([1, 2, 3])
        var url = URL(string: "https://example.com/a?b=c")!
        var decimal = Decimal(string: "3.14159")!
    }

    /// A container written to after a sibling was started, legal for an `Encoder`.
    struct OutOfOrder: Codable, Equatable {
        var a = 1, b = 2
        enum CodingKeys: CodingKey { case outer, inner, after }
        func encode(to encoder: any Encoder) throws {
            var outer = encoder.container(keyedBy: CodingKeys.self)
            var inner = outer.nestedContainer(keyedBy: CodingKeys.self, forKey: .inner)
            try outer.encode(a, forKey: .after)
            try inner.encode(b, forKey: .after)
        }
        init() {}
        init(from decoder: any Decoder) throws {
            let outer = try decoder.container(keyedBy: CodingKeys.self)
            a = try outer.decode(Int.self, forKey: .after)
            b = try outer.nestedContainer(keyedBy: CodingKeys.self, forKey: .inner).decode(Int.self, forKey: .after)
        }
    }

    /// A key written twice, and an error swallowed by the value's own code.
    struct Twice: Codable, Equatable {
        var value = 1
        enum CodingKeys: CodingKey { case value }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try? c.encode(0, forKey: .value)
            try? c.encode(value, forKey: .value)
        }
    }

    /// `value` encodes to JSON that decodes back to it, and that is the same JSON document as
    /// `JSONEncoder`'s (the same bytes but for the order of an object's keys, which JSONEncoder
    /// varies from call to call, and its escaped `/`).
    static func check<Value: Codable & Equatable>(_ value: Value, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let ours = try JournalEncoder().encode(value)
        let theirs = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(Value.self, from: Data(ours)) == value, sourceLocation: sourceLocation)
        let parsed = try JSONSerialization.jsonObject(with: Data(ours), options: .fragmentsAllowed) as? NSObject
        let expected = try JSONSerialization.jsonObject(with: theirs, options: .fragmentsAllowed) as? NSObject
        #expect(parsed == expected, "\(String(decoding: ours, as: UTF8.self)) is not \(String(decoding: theirs, as: UTF8.self))", sourceLocation: sourceLocation)
    }

    @Test func primitivesAtTheTop() throws {
        for value in [0, 1, -1, Int.max, Int.min] { try Self.check(value) }
        for value in [0.1, 5.0, -0.0, 1e300, .leastNonzeroMagnitude, 123_456.789, -2.5e-8] { try Self.check(value) }
        for value: Float in [0.1, 3, 1e30] { try Self.check(value) }
        for value in ["", "plain", "é 😀", "quote \" backslash \\ newline \n tab \t control \u{1}\u{1F}"] { try Self.check(value) }
        try Self.check("a/b")
        try Self.check(true)
        try Self.check(UInt64.max)
        try Self.check(Int?.none)
        try Self.check(Optional(3))
    }

    @Test func eventsAndTheirPayloads() throws {
        try Self.check(Event.add(42))
        try Self.check(Event.rename(name: "new", previous: nil))
        try Self.check(Event.rename(name: "new", previous: "old"))
        try Self.check(Event.reset)
        try Self.check(Event.nested([[1, 2], [], [3]], 0.25))
        try Self.check(Event.place(Order(id: 7, note: nil)))
        try Self.check(Event.place(Order(id: 7, note: "rush")))
        try Self.check([Event.add(1), .reset])
        try Self.check(Ledger.Event.add(3))
        try Self.check(Tally.Event.rename(name: "Food"))
    }

    /// The shapes of events are written by the encoder itself: none of them goes to JSONEncoder.
    @Test func eventsAreWrittenWithoutJSONEncoder() throws {
        func written(_ value: some Encodable) throws -> String {
            let writer = JSONWriter()
            try writer.encodeValue(value, path: [])
            try writer.finish()
            return String(decoding: writer.bytes, as: UTF8.self)
        }
        #expect(try written(1) == "1")
        #expect(try written(Event.add(42)) == #"{"add":{"_0":42}}"#)
        #expect(try written(Event.rename(name: "n", previous: nil)) == #"{"rename":{"name":"n"}}"#)
        #expect(try written(Event.reset) == #"{"reset":{}}"#)
        #expect(try written(Event.nested([[1], []], 2.5)) == #"{"nested":{"_0":[[1],[]],"_1":2.5}}"#)
        #expect(try written(Event.place(Order(id: 1, note: "x"))).hasPrefix(#"{"place":{"_0":{"id":1,"note":"x","lines":[{"sku":"#))
    }

    /// An object with more keys than the writer scans for a repeated one: a dictionary, as a
    /// snapshot's state holds, and a value whose `encode(to:)` writes one of 40 keys twice.
    struct ManyKeys: Codable, Equatable {
        var count = 40
        var repeated: Int?
        struct Key: CodingKey {
            let stringValue: String
            init(stringValue: String) { self.stringValue = stringValue }
            var intValue: Int? { nil }
            init?(intValue: Int) { nil }
        }
        init(repeated: Int? = nil) { self.repeated = repeated }
        init(from decoder: any Decoder) throws {
            count = try decoder.container(keyedBy: Key.self).allKeys.count
        }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            for index in 0..<count { try c.encode(index, forKey: Key(stringValue: "k\(index)")) }
            if let repeated { try c.encode(repeated, forKey: Key(stringValue: "k\(repeated)")) }
        }
    }

    @Test func objectsWithManyKeys() throws {
        try Self.check(Dictionary(uniqueKeysWithValues: (0..<1_000).map { ("key \($0)", $0) }))
        try Self.check(Dictionary(uniqueKeysWithValues: (0..<100).map { ($0, "value \($0)") }))
        try Self.check(ManyKeys())
        // A key written twice, after more keys than are scanned: JSONEncoder's document.
        let twice = ManyKeys(repeated: 30)
        #expect(throws: Unsupported.self) {
            let writer = JSONWriter()
            try writer.encodeValue(twice, path: [])
            try writer.finish()
        }
        let ours = try JSONSerialization.jsonObject(with: Data(try JournalEncoder().encode(twice))) as? NSObject
        let theirs = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(twice)) as? NSObject
        #expect(ours == theirs)
    }

    @Test func whatItHandsToJSONEncoder() throws {
        try Self.check(Special())
        try Self.check(Data([9, 8]))
        try Self.check(OutOfOrder())
        #expect(try JSONDecoder().decode(Twice.self, from: Data(try JournalEncoder().encode(Twice()))) == Twice())
        // JSONEncoder's own errors: a non-finite number, a value that encodes nothing.
        #expect(throws: EncodingError.self) { try JournalEncoder().encode(Double.nan) }
        #expect(throws: EncodingError.self) { try JournalEncoder().encode([Event.nested([], .infinity)]) }
    }
}
