/// A JSON reader that checks what Foundation's readers let through: a key given twice in one
/// object (they keep one of the values, silently), and numbers as they were written (they read
/// `9007199254740993` as 2^53, a `Double`). It builds no values; it checks the document's syntax
/// (RFC 8259) and returns the literal text of the top-level object's numbers, so that integer
/// fields can be read exactly.
enum StrictJSON {
    /// What is wrong with a document, with the byte offset where it was found.
    enum Failure: Error, Equatable, CustomStringConvertible {
        /// Not JSON.
        case syntax(String, offset: Int)
        /// JSON, but an object has a key twice.
        case duplicateKey(String, offset: Int)

        var description: String {
            switch self {
            case .syntax(let what, let offset): "\(what) at byte \(offset)"
            case .duplicateKey(let key, let offset): "the key '\(key)' appears twice (again at byte \(offset))"
            }
        }
    }

    /// Nesting deeper than this is refused rather than read recursively without bound.
    static let maximumDepth = 64

    /// Checks `bytes` and returns, for each member of the top-level value that is a number (when
    /// that value is an object), the number's literal text.
    static func topLevelNumbers(in bytes: [UInt8]) throws(Failure) -> [String: String] {
        var reader = Reader(bytes: bytes)
        reader.skipWhitespace()
        var numbers: [String: String] = [:]
        try reader.value(depth: 0, topLevelNumbers: &numbers)
        reader.skipWhitespace()
        guard reader.offset == bytes.count else { throw .syntax("unexpected data after the document", offset: reader.offset) }
        return numbers
    }

    /// Whether `literal` (a JSON number) is written as an integer: no fraction, no exponent.
    static func isIntegerLiteral(_ literal: String) -> Bool {
        !literal.utf8.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var current: UInt8? { offset < bytes.count ? bytes[offset] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { offset += 1 }
        }

        mutating func expect(_ byte: UInt8, _ what: String) throws(Failure) {
            guard current == byte else { throw .syntax("expected \(what)", offset: offset) }
            offset += 1
        }

        /// Reads one value; when it is the top-level object, records its members' number literals.
        mutating func value(depth: Int, topLevelNumbers: inout [String: String]) throws(Failure) {
            guard depth < maximumDepth else { throw .syntax("nested deeper than \(maximumDepth) levels", offset: offset) }
            switch current {
            case UInt8(ascii: "{"):
                offset += 1
                var keys = Set<String>()
                skipWhitespace()
                if current == UInt8(ascii: "}") {
                    offset += 1
                    return
                }
                while true {
                    skipWhitespace()
                    let keyOffset = offset
                    guard current == UInt8(ascii: "\"") else { throw .syntax("expected a string key", offset: offset) }
                    let key = try string()
                    guard keys.insert(key).inserted else { throw .duplicateKey(key, offset: keyOffset) }
                    skipWhitespace()
                    try expect(UInt8(ascii: ":"), "':'")
                    skipWhitespace()
                    let valueOffset = offset
                    var ignored: [String: String] = [:]
                    try value(depth: depth + 1, topLevelNumbers: &ignored)
                    if depth == 0, let first = bytes[valueOffset...].first, first == UInt8(ascii: "-") || (0x30...0x39).contains(first) {
                        topLevelNumbers[key] = String(decoding: bytes[valueOffset..<offset], as: UTF8.self)
                    }
                    skipWhitespace()
                    if current == UInt8(ascii: ",") {
                        offset += 1
                        continue
                    }
                    try expect(UInt8(ascii: "}"), "',' or '}'")
                    return
                }
            case UInt8(ascii: "["):
                offset += 1
                skipWhitespace()
                if current == UInt8(ascii: "]") {
                    offset += 1
                    return
                }
                while true {
                    skipWhitespace()
                    var ignored: [String: String] = [:]
                    try value(depth: depth + 1, topLevelNumbers: &ignored)
                    skipWhitespace()
                    if current == UInt8(ascii: ",") {
                        offset += 1
                        continue
                    }
                    try expect(UInt8(ascii: "]"), "',' or ']'")
                    return
                }
            case UInt8(ascii: "\""):
                _ = try string()
            case UInt8(ascii: "t"):
                try literal("true")
            case UInt8(ascii: "f"):
                try literal("false")
            case UInt8(ascii: "n"):
                try literal("null")
            case let byte? where byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte):
                try number()
            case nil:
                throw .syntax("unexpected end of the document", offset: offset)
            default:
                throw .syntax("unexpected character", offset: offset)
            }
        }

        mutating func literal(_ word: String) throws(Failure) {
            for byte in word.utf8 {
                guard current == byte else { throw .syntax("expected '\(word)'", offset: offset) }
                offset += 1
            }
        }

        mutating func digits() throws(Failure) {
            guard let byte = current, (0x30...0x39).contains(byte) else { throw .syntax("expected a digit", offset: offset) }
            while let byte = current, (0x30...0x39).contains(byte) { offset += 1 }
        }

        mutating func number() throws(Failure) {
            if current == UInt8(ascii: "-") { offset += 1 }
            if current == UInt8(ascii: "0") {
                offset += 1
            } else {
                try digits()
            }
            if current == UInt8(ascii: ".") {
                offset += 1
                try digits()
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                offset += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { offset += 1 }
                try digits()
            }
        }

        /// Reads a string (the opening quote is current) and returns its value, escapes decoded.
        mutating func string() throws(Failure) -> String {
            offset += 1
            var scalars = String.UnicodeScalarView()
            var start = offset
            func flush(_ end: Int) throws(Failure) {
                guard let text = String(validating: bytes[start..<end], as: UTF8.self) else {
                    throw .syntax("invalid UTF-8", offset: start)
                }
                scalars.append(contentsOf: text.unicodeScalars)
            }
            while true {
                guard let byte = current else { throw .syntax("unterminated string", offset: offset) }
                switch byte {
                case UInt8(ascii: "\""):
                    try flush(offset)
                    offset += 1
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    try flush(offset)
                    offset += 1
                    scalars.append(try escape())
                    start = offset
                case 0x00..<0x20:
                    throw .syntax("a control character in a string", offset: offset)
                default:
                    offset += 1
                }
            }
        }

        /// Reads an escape after its backslash.
        mutating func escape() throws(Failure) -> Unicode.Scalar {
            guard let byte = current else { throw .syntax("unterminated string", offset: offset) }
            offset += 1
            switch byte {
            case UInt8(ascii: "\""): return "\""
            case UInt8(ascii: "\\"): return "\\"
            case UInt8(ascii: "/"): return "/"
            case UInt8(ascii: "b"): return "\u{08}"
            case UInt8(ascii: "f"): return "\u{0C}"
            case UInt8(ascii: "n"): return "\n"
            case UInt8(ascii: "r"): return "\r"
            case UInt8(ascii: "t"): return "\t"
            case UInt8(ascii: "u"):
                let escapeOffset = offset - 2
                let unit = try hex4()
                if (0xD800..<0xDC00).contains(unit) {
                    guard current == UInt8(ascii: "\\"), offset + 1 < bytes.count, bytes[offset + 1] == UInt8(ascii: "u") else {
                        throw .syntax("a lone surrogate in \\u escape", offset: escapeOffset)
                    }
                    offset += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw .syntax("a lone surrogate in \\u escape", offset: escapeOffset) }
                    let value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                    guard let scalar = Unicode.Scalar(value) else { throw .syntax("invalid \\u escape", offset: escapeOffset) }
                    return scalar
                }
                guard let scalar = Unicode.Scalar(UInt32(unit)) else {
                    throw .syntax("a lone surrogate in \\u escape", offset: escapeOffset)
                }
                return scalar
            default:
                throw .syntax("invalid escape", offset: offset - 2)
            }
        }

        mutating func hex4() throws(Failure) -> UInt16 {
            var value: UInt16 = 0
            for _ in 0..<4 {
                guard let byte = current else { throw .syntax("unterminated \\u escape", offset: offset) }
                let digit: UInt8
                switch byte {
                case 0x30...0x39: digit = byte - 0x30
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw .syntax("invalid \\u escape", offset: offset)
                }
                value = value << 4 | UInt16(digit)
                offset += 1
            }
            return value
        }
    }
}
