#if Postgres
import FeedbackLoopDurable
import PostgresNIO

/// One row of the journal's tables as the server sent it, read column by column with conversions
/// that fail instead of trapping.
///
/// Another tool may have altered a column's type or stored a value the journal never writes (a
/// negative sequence, an integer where a payload belongs). postgres-nio would decode a `BYTEA`
/// from any column and `UInt64(_:)` traps on a negative number, so each cell's type and value are
/// checked here, and a bad one is a `JournalError.malformedValue(loop:sequence:column:found:)`
/// naming the loop, the record's sequence when it is known, and the table's column.
struct StoredRow {
    let loop: String
    let table: String
    /// The record's sequence, once read.
    let sequence: UInt64?
    let cells: [PostgresCell]

    init(_ row: PostgresRow, loop: String, table: String, sequence: UInt64? = nil) {
        self.init(cells: Array(row), loop: loop, table: table, sequence: sequence)
    }

    private init(cells: [PostgresCell], loop: String, table: String, sequence: UInt64?) {
        self.loop = loop
        self.table = table
        self.sequence = sequence
        self.cells = cells
    }

    /// The same row, naming its record's `sequence` in errors.
    func record(_ sequence: UInt64) -> StoredRow { StoredRow(cells: cells, loop: loop, table: table, sequence: sequence) }

    /// Whether the column is NULL (a column that a join may leave empty).
    func isNull(_ index: Int) -> Bool { cells.indices.contains(index) && cells[index].bytes == nil }

    /// A `BIGINT`, `INTEGER` or `SMALLINT` column.
    func integer(_ index: Int) throws -> Int64 {
        let cell = try self.cell(index)
        guard [.int2, .int4, .int8].contains(cell.dataType), cell.bytes != nil, let value = try? cell.decode(Int64.self) else {
            throw malformed(cell)
        }
        return value
    }

    /// An integer of at least `minimum`, as an unsigned number.
    func unsigned(_ index: Int, atLeast minimum: UInt64) throws -> UInt64 {
        guard let value = UInt64(exactly: try integer(index)), value >= minimum else { throw malformed(try cell(index)) }
        return value
    }

    /// A sequence number: 1 or more.
    func sequence(_ index: Int) throws -> UInt64 { try unsigned(index, atLeast: 1) }

    /// A schema version: any `Int` (the loop refuses one newer than it reads).
    func schemaVersion(_ index: Int) throws -> Int {
        guard let version = Int(exactly: try integer(index)) else { throw malformed(try cell(index)) }
        return version
    }

    /// A `BYTEA` column.
    func bytes(_ index: Int) throws -> [UInt8] {
        let cell = try self.cell(index)
        guard cell.dataType == .bytea, let bytes = cell.bytes else { throw malformed(cell) }
        return Array(buffer: bytes)
    }

    /// A `TEXT` column that may be NULL.
    func optionalText(_ index: Int) throws -> String? {
        let cell = try self.cell(index)
        guard var bytes = cell.bytes else { return nil }
        guard [.text, .varchar].contains(cell.dataType), let text = bytes.readString(length: bytes.readableBytes) else {
            throw malformed(cell)
        }
        return text
    }

    /// A `BOOLEAN` column.
    func bool(_ index: Int) throws -> Bool {
        let cell = try self.cell(index)
        guard cell.dataType == .bool, cell.bytes != nil, let value = try? cell.decode(Bool.self) else { throw malformed(cell) }
        return value
    }

    /// The error for a value of `table` that a journal never writes, with `found` saying what is
    /// there instead.
    func malformed(column: String, found: String) -> JournalError {
        .malformedValue(loop: loop, sequence: sequence, column: "\(table).\(column)", found: found)
    }

    private func cell(_ index: Int) throws -> PostgresCell {
        guard cells.indices.contains(index) else {
            throw malformed(column: "column \(index + 1)", found: "is missing: the row has \(cells.count) columns")
        }
        return cells[index]
    }

    private func malformed(_ cell: PostgresCell) -> JournalError {
        malformed(column: cell.columnName, found: Self.describe(cell))
    }

    /// What a cell holds, as an error says it.
    static func describe(_ cell: PostgresCell) -> String {
        guard var bytes = cell.bytes else { return "holds NULL" }
        switch cell.dataType {
        case .int2, .int4, .int8:
            if let value = try? cell.decode(Int64.self) { return "holds the integer \(value)" }
        case .text, .varchar, .name, .bpchar:
            if let text = bytes.readString(length: bytes.readableBytes) { return "holds the text '\(text.prefix(40))'" }
        case .bytea:
            return "holds \(bytes.readableBytes) bytes"
        default:
            break
        }
        return "holds a value of type \(cell.dataType.knownSQLName.map { $0.lowercased() } ?? "oid \(cell.dataType.rawValue)")"
    }
}
#endif
