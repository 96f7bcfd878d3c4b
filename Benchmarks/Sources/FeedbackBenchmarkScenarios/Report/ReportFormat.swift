import Foundation

/// How a ``BenchmarkReport`` is written out: a Markdown table per scenario (readable in a terminal
/// and pasteable into Benchmarks/README.md as is), JSON (the input of `Benchmarks/scripts/chart.py`), or CSV.
public enum ReportFormat: String, CaseIterable, Codable, Sendable {
    case table, json, csv

    public func render(_ report: BenchmarkReport) throws -> String {
        switch self {
        case .table: Self.table(report)
        case .json: try Self.json(report)
        case .csv: Self.csv(report)
        }
    }

    static func json(_ report: BenchmarkReport) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(report), as: UTF8.self) + "\n"
    }

    static func table(_ report: BenchmarkReport) -> String {
        var out = "feedback-bench \(report.date), \(report.processors) processors, \(report.size.events) events"
        if let allocator = report.allocator { out += ", allocator \(allocator)" }
        if let load = report.loadAverage, !load.isEmpty {
            out += ", load average " + load.map { String(format: "%.1f", $0) }.joined(separator: " → ")
        }
        out += "\n"
        for scenario in report.scenarios {
            out += "\n### \(scenario.scenario) — \(scenario.summary ?? scenario.scenario.summary)\nlimit: \(scenario.limit)\n\n"
            var header = ["case", "metric", "limit"]
            for backend in report.backends { header += [backend, "× limit"] }
            var lines = [header]
            for row in scenario.rows {
                var cells = [row.label, row.metric, row.limit.map(number) ?? "—"]
                for backend in report.backends {
                    cells.append(row.values[backend].map(number) ?? "—")
                    cells.append(row.ratio(backend).map(ratio) ?? "")
                }
                lines.append(cells)
            }
            out += markdown(lines)
            for beaten in scenario.beatenLimits {
                out += "\n**BELOW ITS LIMIT** \(beaten.column): \(beaten.label), \(beaten.metric) at \(ratio(beaten.ratio))× the limit: the limit is not the floor of this work and must be fixed.\n"
            }
            for failure in scenario.failures {
                out += "\n**FAILED** \(failure) — no figures from this run.\n"
            }
        }
        return out
    }

    static func csv(_ report: BenchmarkReport) -> String {
        var header = ["scenario", "case", "metric", "better", "limit"]
        for backend in report.backends { header += [backend, "\(backend)_ratio"] }
        var out = header.joined(separator: ",") + "\n"
        for scenario in report.scenarios {
            for row in scenario.rows {
                var cells = [scenario.scenario.rawValue, row.label, row.metric, row.better.rawValue, row.limit.map { "\($0)" } ?? ""]
                for backend in report.backends {
                    cells.append(row.values[backend].map { "\($0)" } ?? "")
                    cells.append(row.ratio(backend).map { "\($0)" } ?? "")
                }
                out += cells.map(csvField).joined(separator: ",") + "\n"
            }
        }
        return out
    }

    static func csvField(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Three significant digits, thousands grouped: enough to compare, not so many as to suggest a
    /// precision wall-clock figures do not have.
    ///
    /// Any `Double` renders: a saved report is input like any other, and a value beyond `Int`'s
    /// range (≥ 9.2e18) must not trap on the way to a string.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : value < 0 ? "-inf" : "inf" }
        let magnitude = abs(value)
        if magnitude >= 1e15 { return String(format: "%.3g", value) }
        if magnitude >= 1_000 {
            var digits = String(format: "%.0f", magnitude)
            var grouped = ""
            while digits.count > 3 {
                grouped = "," + digits.suffix(3) + grouped
                digits.removeLast(3)
            }
            return (value < 0 ? "-" : "") + digits + grouped
        }
        if magnitude >= 100 || value == value.rounded() { return String(format: "%.0f", value) }
        if magnitude >= 10 { return String(format: "%.1f", value) }
        if magnitude >= 1 { return String(format: "%.2f", value) }
        // Below what three decimals show, a figure (a ratio recorded as one) keeps two
        // significant digits instead of reading "0.000".
        if magnitude < 0.0005 && value != 0 { return String(format: "%.2g", value) }
        return String(format: "%.3f", value)
    }

    /// A ratio to the limit that stays true below 1: a backend 30 times better than the limit reads
    /// "0.033", not "0.0".
    static func ratio(_ value: Double) -> String {
        guard value.isFinite else { return number(value) }
        if value >= 1e15 { return String(format: "%.3g", value) }
        if value >= 100 { return number(value) }
        if value >= 0.995 { return String(format: "%.1f", value) }
        return String(format: "%.2g", value)
    }

    static func markdown(_ lines: [[String]]) -> String {
        let widths = lines[0].indices.map { column in lines.map { $0[column].count }.max() ?? 0 }
        func render(_ cells: [String]) -> String {
            "| " + zip(cells, widths).map { cell, width in cell.padding(toLength: width, withPad: " ", startingAt: 0) }
                .joined(separator: " | ") + " |\n"
        }
        var out = render(lines[0])
        out += "|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|\n"
        for line in lines.dropFirst() { out += render(line) }
        return out
    }
}
