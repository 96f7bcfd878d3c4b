import FeedbackBenchmarkScenarios
import Foundation

/// Reading a report saved with `--format json` back for `--render`, with errors that name the path
/// and what was expected instead of Foundation's generic wording.
enum SavedReport {
    /// Reports are a few tens of kilobytes; anything far bigger is not one.
    static let maximumBytes = 64 << 20

    struct Failure: Error, CustomStringConvertible, Equatable {
        var description: String
        init(_ description: String) { self.description = description }
    }

    static func read(_ path: String) throws(Failure) -> BenchmarkReport {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let error = errno
            if error == ENOENT { throw Failure("cannot render \(path): no such file (expected a report saved with --format json)") }
            throw Failure("cannot render \(path): \(ReportDestination.describe(error))")
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw Failure("cannot render \(path): it is a directory, not a report saved with --format json")
        default: throw Failure("cannot render \(path): not a regular file (expected a report saved with --format json)")
        }
        guard Int(info.st_size) <= maximumBytes else {
            throw Failure("cannot render \(path): \(info.st_size) bytes is too large for a report (at most \(maximumBytes))")
        }
        guard access(path, R_OK) == 0 else {
            throw Failure("cannot render \(path): \(ReportDestination.describe(errno))")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw Failure("cannot render \(path): the file could not be read")
        }
        do {
            return try JSONDecoder().decode(BenchmarkReport.self, from: data)
        } catch let error as DecodingError {
            throw Failure("cannot render \(path): not a feedback-bench report saved with --format json (\(explain(error)))")
        } catch {
            throw Failure("cannot render \(path): not a feedback-bench report saved with --format json")
        }
    }

    /// A decoding error as "at scenarios[0].rows: what was wrong".
    static func explain(_ error: DecodingError) -> String {
        let context: DecodingError.Context
        switch error {
        case .dataCorrupted(let c): context = c
        case .keyNotFound(let key, let c):
            return "\(location(c.codingPath)) has no \"\(key.stringValue)\""
        case .typeMismatch(_, let c), .valueNotFound(_, let c): context = c
        @unknown default: return "\(error)"
        }
        let underlying = (context.underlyingError as? NSError)?.userInfo[NSDebugDescriptionErrorKey] as? String
        return "\(location(context.codingPath)): \(underlying ?? context.debugDescription)"
    }

    private static func location(_ path: [any CodingKey]) -> String {
        guard !path.isEmpty else { return "the top level" }
        var text = ""
        for key in path {
            if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
        }
        return text
    }

    /// The report narrowed to the chosen backends and scenarios, in the order asked for. Naming one
    /// the report does not hold is an error, not an empty table.
    static func select(
        _ report: BenchmarkReport, backends: [String]?, scenarios: [Scenario]?
    ) throws(Failure) -> BenchmarkReport {
        var selected = report
        if let backends {
            for backend in backends where !report.backends.contains(backend) {
                throw Failure(
                    "the report has no figures for backend '\(backend)'; it has \(report.backends.joined(separator: ", "))")
            }
            selected.backends = backends
            for index in selected.scenarios.indices {
                for row in selected.scenarios[index].rows.indices {
                    selected.scenarios[index].rows[row].values = selected.scenarios[index].rows[row].values
                        .filter { backends.contains($0.key) }
                }
                selected.scenarios[index].failures = selected.scenarios[index].failures
                    .filter { failure in backends.contains { failure.hasPrefix("\($0):") } }
            }
        }
        if let scenarios {
            let held = report.scenarios.map(\.scenario)
            for scenario in scenarios where !held.contains(scenario) {
                throw Failure(
                    "the report has no '\(scenario)' scenario; it has \(held.map(\.rawValue).joined(separator: ", "))")
            }
            selected.scenarios = scenarios.compactMap { wanted in selected.scenarios.first { $0.scenario == wanted } }
        }
        return selected
    }
}
