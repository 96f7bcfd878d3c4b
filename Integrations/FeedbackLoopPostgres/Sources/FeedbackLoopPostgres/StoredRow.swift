import FeedbackLoopDurable
import PostgresNIO

/// One row of the journal's tables as the server sent it, read column by column with conversions
/// that fail instead of trapping.
///
/// Another tool may have altered a column's type or stored a value the journal never writes (a
/// negative sequence, an integer where a payload belongs). postgres-nio would decode a `BYTEA`
/// from any column and `UInt64(_:)` traps on a negative number, so each cell's type and value are
/// checked here and a bad one is a `JournalError` naming the loop, the record and the column.
struct StoredRow {
    let loop: String
    /// The record as an error names it: "event 42", "the event after 41", "the lease".
    let record: String
    let cells: [PostgresCell]

    init(_ row: PostgresRow, loop: String, record: String) {
        self.loop = loop
        self.record = record
        self.cells = Array(row)
    }

    /// A `BIGINT`, `INTEGER` or `SMALLINT` column.
    func integer(_ index: Int) throws -> Int64 {
        let cell = try self.cell(index)
        guard [.int2, .int4, .int8].contains(cell.dataType) else { throw corrupt(cell, "holds \(type(cell)), not an integer") }
        guard cell.bytes != nil else { throw corrupt(cell, "is NULL") }
        do {
            return try cell.decode(Int64.self)
        } catch {
            throw corrupt(cell, "holds an integer that cannot be read (\(error))")
        }
    }

    /// An integer of at least `minimum`, as an unsigned number.
    func unsigned(_ index: Int, atLeast minimum: UInt64) throws -> UInt64 {
        let value = try integer(index)
        guard let unsigned = UInt64(exactly: value), unsigned >= minimum else {
            throw corrupt(try cell(index), "holds \(value), less than \(minimum)")
        }
        return unsigned
    }

    /// A sequence number: 1 or more.
    func sequence(_ index: Int) throws -> UInt64 { try unsigned(index, atLeast: 1) }

    /// A schema version: not negative.
    func schemaVersion(_ index: Int) throws -> Int {
        let value = try integer(index)
        guard value >= 0, let version = Int(exactly: value) else { throw corrupt(try cell(index), "holds \(value), a negative schema version") }
        return version
    }

    /// A `BYTEA` column.
    func bytes(_ index: Int) throws -> [UInt8] {
        let cell = try self.cell(index)
        guard cell.dataType == .bytea else { throw corrupt(cell, "holds \(type(cell)), not bytea") }
        guard let bytes = cell.bytes else { throw corrupt(cell, "is NULL") }
        return Array(buffer: bytes)
    }

    /// A `BOOLEAN` column.
    func bool(_ index: Int) throws -> Bool {
        let cell = try self.cell(index)
        guard cell.dataType == .bool else { throw corrupt(cell, "holds \(type(cell)), not a boolean") }
        guard cell.bytes != nil else { throw corrupt(cell, "is NULL") }
        do {
            return try cell.decode(Bool.self)
        } catch {
            throw corrupt(cell, "holds a boolean that cannot be read (\(error))")
        }
    }

    private func cell(_ index: Int) throws -> PostgresCell {
        guard cells.indices.contains(index) else {
            throw JournalError.unavailable("journal of loop '\(loop)', \(record): the row has \(cells.count) columns, column \(index + 1) is missing")
        }
        return cells[index]
    }

    private func type(_ cell: PostgresCell) -> String {
        cell.dataType.knownSQLName.map { $0.lowercased() } ?? "a value of type oid \(cell.dataType.rawValue)"
    }

    private func corrupt(_ cell: PostgresCell, _ problem: String) -> JournalError {
        .unavailable("journal of loop '\(loop)', \(record): column '\(cell.columnName)' \(problem)")
    }
}
