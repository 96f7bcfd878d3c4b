import Foundation

/// Where this test run's SQLite journals live: one folder per test process, removed when the
/// process exits, so that a run leaves no databases (and their `-wal` and `-shm` files) behind
/// in the machine's temporary directory.
enum TemporaryFiles {
    static let folder: URL = {
        let folder = FileManager.default.temporaryDirectory
            .appending(path: "feedbackloop-durable-tests-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: TemporaryFiles.folder) }
        return folder
    }()

    /// A fresh path in ``folder``: `prefix`, a random number and `suffix`.
    static func path(_ prefix: String, suffix: String = ".sqlite") -> String {
        folder.appending(path: "\(prefix)-\(UInt64.random(in: 0...UInt64.max))\(suffix)").path
    }
}
