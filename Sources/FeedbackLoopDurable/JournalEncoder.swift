#if Durable
import Foundation

/// Encodes a journaled event or snapshot as JSON that `JSONDecoder` reads back into the value
/// `JSONEncoder` (default options) would have given it, at a fraction of `JSONEncoder`'s cost:
/// the durable loop encodes every event on its sender's thread, and for small events
/// `JSONEncoder`'s fixed cost per call (~1 µs for an `Int`) was most of a group-commit `send`;
/// a snapshot, encoded by the committer between two appends, costs `JSONEncoder` about twice
/// as much as this writer.
///
/// It writes the JSON as the value's `encode(to:)` asks for it, into one byte array. Whatever it
/// does not write the way `JSONEncoder` would, it hands to `JSONEncoder` for the whole value:
/// the types `JSONEncoder` treats specially (`Data`, `URL`, `Decimal`), a container used again
/// after a sibling was started (possible, but no synthesized `Codable` does it), a key written
/// twice, `superEncoder`, a value that encodes nothing, and every error (so that an unencodable
/// value fails with `JSONEncoder`'s own error). Numbers and strings are written as Swift prints
/// them, which `JSONDecoder` parses back exactly; key order is the order of the calls.
@usableFromInline
struct JournalEncoder: Sendable {
    @usableFromInline
    init() {}

    @usableFromInline
    func encode<Value: Encodable>(_ value: Value) throws -> [UInt8] {
        let writer = JSONWriter()
        do {
            try writer.encodeValue(value, path: [])
            try writer.finish()
            return writer.bytes
        } catch {
            return Array(try JSONEncoder().encode(value))
        }
    }
}

/// What makes ``JournalEncoder`` hand a value to `JSONEncoder`.
struct Unsupported: Error {}

/// The JSON being written, and the containers still open in it, innermost last.
///
/// One `encode` call makes it and uses it on its own thread, and none of its accesses to its
/// properties spans a call out of it (to a value's `encode(to:)`): its properties skip the
/// run-time exclusivity checks, which cost more than the writes they guard (two calls into the
/// run time for every byte of a string).
final class JSONWriter {
    struct Frame {
        let id: Int
        let isObject: Bool
        var count = 0
        /// Where this object's keys begin in ``keys``.
        let firstKey: Int
        /// This object's keys once it has more than ``JSONWriter/scannedKeys``: found by hash
        /// rather than by a scan of ``keys``.
        var keySet: Set<String>?
    }

    /// An object holds at most this many keys before its keys go in a set (a scan is cheaper
    /// below it: most keys are short, compared without hashing).
    static let scannedKeys = 16

    @exclusivity(unchecked) var bytes: [UInt8] = []
    @exclusivity(unchecked) var frames: [Frame] = []
    /// The keys written so far in every open object, outermost first: to find a key written
    /// twice, which `JSONEncoder` would merge.
    @exclusivity(unchecked) var keys: [String] = []
    @exclusivity(unchecked) var lastID = 0
    /// The value slot an encoder was handed for, not filled yet: the next value written fills
    /// it, and only the encoder of that slot may write it.
    @exclusivity(unchecked) var openSlot: Int?
    @exclusivity(unchecked) var lastSlot = 0
    /// Set by every refusal, so that a value whose `encode(to:)` swallowed the error (`try?`)
    /// still goes to `JSONEncoder` rather than out half written.
    @exclusivity(unchecked) var refused = false

    init() {
        bytes.reserveCapacity(64)
    }

    /// Records a refusal and returns the error that says it.
    func refuse() -> Unsupported {
        refused = true
        return Unsupported()
    }

    func finish() throws {
        guard !refused, openSlot == nil, !bytes.isEmpty else { throw refuse() }
        while !frames.isEmpty { close() }
    }

    /// Closes the innermost container.
    private func close() {
        let frame = frames.removeLast()
        bytes.append(frame.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"))
        if frame.isObject { keys.removeSubrange(frame.firstKey...) }
    }

    /// Closes the containers opened inside the frame `id`, so that it can take its next element;
    /// throws when that frame is closed already (a container written to again after a sibling
    /// was started) or when a value slot inside it was handed out and never filled.
    func reopen(_ id: Int) throws {
        guard openSlot == nil else { throw refuse() }
        while let top = frames.last, top.id != id { close() }
        guard !frames.isEmpty else { throw refuse() }
    }

    /// Writes the separator and `key` of a new member of the object `id`.
    func beginMember(_ id: Int, key: String) throws {
        try reopen(id)
        let index = frames.count - 1
        let count = frames[index].count
        if count < Self.scannedKeys {
            if count > 0, keys[frames[index].firstKey...].contains(key) { throw refuse() }
            keys.append(key)
        } else {
            if count == Self.scannedKeys { frames[index].keySet = Set(keys[frames[index].firstKey...]) }
            guard frames[index].keySet!.insert(key).inserted else { throw refuse() }
        }
        if count > 0 { bytes.append(UInt8(ascii: ",")) }
        frames[index].count = count + 1
        writeString(key)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Writes the separator of a new element of the array `id`.
    func beginElement(_ id: Int) throws {
        try reopen(id)
        let index = frames.count - 1
        if frames[index].count > 0 { bytes.append(UInt8(ascii: ",")) }
        frames[index].count += 1
    }

    /// Opens an object or an array where the writer stands, and returns its id.
    func open(object: Bool) -> Int {
        lastID += 1
        frames.append(Frame(id: lastID, isObject: object, firstKey: keys.count))
        bytes.append(object ? UInt8(ascii: "{") : UInt8(ascii: "["))
        return lastID
    }

    /// Hands out the value slot where the writer stands.
    func handOutSlot() -> Int {
        lastSlot += 1
        openSlot = lastSlot
        return lastSlot
    }

    /// Fills the slot `slot` (the one handed out last), before its value is written.
    func fill(_ slot: Int) throws {
        guard openSlot == slot, slot >= 0 else { throw refuse() }
        openSlot = nil
    }

    /// Writes `value` where the writer stands: a primitive at once, anything else through its
    /// `encode(to:)` with an encoder of this slot.
    ///
    /// The common primitives are recognised by their type (a comparison of metadata pointers,
    /// where a cast would cost a dynamic cast each).
    func encodeValue<Value: Encodable>(_ value: Value, path: @autoclosure () -> [any CodingKey]) throws {
        if Value.self == Data.self || Value.self == URL.self || Value.self == Decimal.self { throw refuse() }
        if Value.self == Int.self {
            writeInteger(unsafeBitCast(value, to: Int.self))
        } else if Value.self == String.self {
            writeString(unsafeBitCast(value, to: String.self))
        } else if Value.self == Bool.self {
            bytes.append(contentsOf: (unsafeBitCast(value, to: Bool.self) ? "true" : "false").utf8)
        } else if Value.self == Double.self {
            try writeFloat(unsafeBitCast(value, to: Double.self))
        } else {
            let slot = handOutSlot()
            try value.encode(to: SlotEncoder(writer: self, slot: slot, codingPath: path()))
            // A value that wrote nothing: JSONEncoder's own rule decides what it is.
            if openSlot == slot { throw refuse() }
        }
    }

    /// Writes the decimal digits of `value` straight into ``bytes``: `String(value)` costs a
    /// string's making and copying per number.
    func writeInteger<Integer: BinaryInteger>(_ value: Integer) {
        guard var magnitude = UInt64(exactly: value.magnitude) else {
            bytes.append(contentsOf: String(value).utf8)
            return
        }
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        let start = bytes.count
        repeat {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        bytes[start...].reverse()
    }

    /// As JSONEncoder writes it: Swift's shortest round-tripping form, less a trailing ".0".
    func writeFloat<Float: BinaryFloatingPoint & LosslessStringConvertible>(_ value: Float) throws {
        // JSONEncoder's default refuses them, with its own error.
        guard value.isFinite else { throw refuse() }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    func writeString(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            bytes.append(UInt8(ascii: "\""))
            // Most strings need no escape: their bytes go in at once.
            if utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
                bytes.append(contentsOf: utf8)
            } else {
                for byte in utf8 { writeEscaped(byte) }
            }
            bytes.append(UInt8(ascii: "\""))
        }
    }

    private func writeEscaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
        case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
        case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case UInt8(ascii: "\r"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        case 0..<0x20:
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            bytes.append(hex[Int(byte >> 4)])
            bytes.append(hex[Int(byte & 0xF)])
        default: bytes.append(byte)
        }
    }
}

/// The encoder of one value slot: its first container (or single value) fills the slot.
struct SlotEncoder: Encoder {
    let writer: JSONWriter
    let slot: Int
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(ObjectContainer<Key>(writer: writer, id: opened(object: true), codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        ArrayContainer(writer: writer, id: opened(object: false), codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        ValueContainer(writer: writer, slot: slot, codingPath: codingPath)
    }

    /// The container opened in this slot, or -1 (a container every write refuses) when the
    /// slot was filled or abandoned: asking twice for a container is legal for JSONEncoder,
    /// which merges them; here it sends the value to JSONEncoder.
    private func opened(object: Bool) -> Int {
        guard (try? writer.fill(slot)) != nil else { return -1 }
        return writer.open(object: object)
    }
}

struct ObjectContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let writer: JSONWriter
    let id: Int
    let codingPath: [any CodingKey]

    private func member(_ key: Key) throws {
        guard id >= 0 else { throw writer.refuse() }
        try writer.beginMember(id, key: key.stringValue)
    }

    mutating func encodeNil(forKey key: Key) throws {
        try member(key)
        writer.bytes.append(contentsOf: "null".utf8)
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        try member(key)
        writer.bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    mutating func encode(_ value: String, forKey key: Key) throws {
        try member(key)
        writer.writeString(value)
    }

    mutating func encode(_ value: Double, forKey key: Key) throws {
        try member(key)
        try writer.writeFloat(value)
    }

    mutating func encode(_ value: Float, forKey key: Key) throws {
        try member(key)
        try writer.writeFloat(value)
    }

    mutating func encode(_ value: Int, forKey key: Key) throws { try member(key); writer.writeInteger(value) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try member(key); writer.writeInteger(value) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try member(key); writer.writeInteger(value) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try member(key); writer.writeInteger(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try member(key); writer.writeInteger(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try member(key); writer.writeInteger(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try member(key); writer.writeInteger(value) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try member(key); writer.writeInteger(value) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try member(key); writer.writeInteger(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try member(key); writer.writeInteger(value) }

    mutating func encode<Value: Encodable>(_ value: Value, forKey key: Key) throws {
        try member(key)
        try writer.encodeValue(value, path: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let id = (try? member(key)) != nil ? writer.open(object: true) : -1
        return KeyedEncodingContainer(ObjectContainer<NestedKey>(writer: writer, id: id, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let id = (try? member(key)) != nil ? writer.open(object: false) : -1
        return ArrayContainer(writer: writer, id: id, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder { RefusingEncoder(writer: writer, codingPath: codingPath) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { RefusingEncoder(writer: writer, codingPath: codingPath + [key]) }
}

/// The primitives, written alike by an array's next element and a single value: each container
/// says what comes before a value (``beforeValue()``).
protocol PrimitiveWriting {
    var writer: JSONWriter { get }
    mutating func beforeValue() throws
}

extension PrimitiveWriting {
    mutating func encodeNil() throws {
        try beforeValue()
        writer.bytes.append(contentsOf: "null".utf8)
    }

    mutating func encode(_ value: Bool) throws {
        try beforeValue()
        writer.bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    mutating func encode(_ value: String) throws {
        try beforeValue()
        writer.writeString(value)
    }

    mutating func encode(_ value: Double) throws {
        try beforeValue()
        try writer.writeFloat(value)
    }

    mutating func encode(_ value: Float) throws {
        try beforeValue()
        try writer.writeFloat(value)
    }

    mutating func encode(_ value: Int) throws { try beforeValue(); writer.writeInteger(value) }
    mutating func encode(_ value: Int8) throws { try beforeValue(); writer.writeInteger(value) }
    mutating func encode(_ value: Int16) throws { try beforeValue(); writer.writeInteger(value) }
    mutating func encode(_ value: Int32) throws { try beforeValue(); writer.writeInteger(value) }
    mutating func encode(_ value: Int64) throws { try beforeValue(); writer.writeInteger(value) }
    mutating func encode(_ value: UInt) throws { try beforeValue(); writer.writeInteger(value) }
    mutating func encode(_ value: UInt8) throws { try beforeValue(); writer.writeInteger(value) }
    mutating func encode(_ value: UInt16) throws { try beforeValue(); writer.writeInteger(value) }
    mutating func encode(_ value: UInt32) throws { try beforeValue(); writer.writeInteger(value) }
    mutating func encode(_ value: UInt64) throws { try beforeValue(); writer.writeInteger(value) }
}

struct ArrayContainer: UnkeyedEncodingContainer, PrimitiveWriting {
    let writer: JSONWriter
    let id: Int
    let codingPath: [any CodingKey]
    private(set) var count = 0

    init(writer: JSONWriter, id: Int, codingPath: [any CodingKey]) {
        self.writer = writer
        self.id = id
        self.codingPath = codingPath
    }

    mutating func beforeValue() throws {
        guard id >= 0 else { throw writer.refuse() }
        try writer.beginElement(id)
        count += 1
    }

    /// The coding path of the element about to be written.
    private var elementPath: [any CodingKey] { codingPath + [Index(intValue: count - 1)] }

    mutating func encode<Value: Encodable>(_ value: Value) throws {
        try beforeValue()
        try writer.encodeValue(value, path: elementPath)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let id = (try? beforeValue()) != nil ? writer.open(object: true) : -1
        return KeyedEncodingContainer(ObjectContainer<NestedKey>(writer: writer, id: id, codingPath: elementPath))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let id = (try? beforeValue()) != nil ? writer.open(object: false) : -1
        return ArrayContainer(writer: writer, id: id, codingPath: elementPath)
    }

    mutating func superEncoder() -> any Encoder { RefusingEncoder(writer: writer, codingPath: codingPath) }

    struct Index: CodingKey {
        let intValue: Int?
        var stringValue: String { "Index \(intValue ?? 0)" }
        init(intValue: Int) { self.intValue = intValue }
        init?(stringValue: String) { nil }
    }
}

struct ValueContainer: SingleValueEncodingContainer, PrimitiveWriting {
    let writer: JSONWriter
    let slot: Int
    let codingPath: [any CodingKey]

    func beforeValue() throws { try writer.fill(slot) }

    mutating func encode<Value: Encodable>(_ value: Value) throws {
        try beforeValue()
        try writer.encodeValue(value, path: codingPath)
    }
}

/// `superEncoder`'s: every use sends the value to `JSONEncoder`.
struct RefusingEncoder: Encoder {
    let writer: JSONWriter
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        refuse()
        return KeyedEncodingContainer(ObjectContainer<Key>(writer: writer, id: -1, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        refuse()
        return ArrayContainer(writer: writer, id: -1, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        refuse()
        return ValueContainer(writer: writer, slot: -1, codingPath: codingPath)
    }

    private func refuse() {
        _ = writer.refuse()
    }
}
#endif
